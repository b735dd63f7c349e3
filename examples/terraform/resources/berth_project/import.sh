# A project is imported by its id or its name.
tofu import berth_project.web 5
tofu import berth_project.web web
