# A snapshot is imported by its id, or by its server (id or name) and its id.
tofu import berth_snapshot.before_upgrade 7
tofu import berth_snapshot.before_upgrade server-a1b2c3/7
