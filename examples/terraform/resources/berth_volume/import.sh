# A volume is imported by its id or its name.
tofu import berth_volume.data 5
tofu import berth_volume.data data
