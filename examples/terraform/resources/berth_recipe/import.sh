# A recipe is imported by its id or its name.
tofu import berth_recipe.motd 2
tofu import berth_recipe.motd motd
