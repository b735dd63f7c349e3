# An SSH key is imported by its id or its name.
tofu import berth_ssh_key.laptop 3
tofu import berth_ssh_key.laptop laptop
