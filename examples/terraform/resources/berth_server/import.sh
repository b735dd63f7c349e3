# A server is imported by its id or its name.
tofu import berth_server.web 42
tofu import berth_server.web server-a1b2c3
