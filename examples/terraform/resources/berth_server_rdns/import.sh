# A PTR is imported as server/ip, the server by id or name.
tofu import berth_server_rdns.web 42/203.0.113.10
