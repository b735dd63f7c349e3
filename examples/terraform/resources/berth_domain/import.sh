# A zone is imported by its id or its name.
tofu import berth_domain.example 3
tofu import berth_domain.example example.com
