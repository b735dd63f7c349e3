# An attachment is imported by its volume and server (each by id or name), or by its
# volume alone (the server it is attached to). Berth does not show automount: an
# imported attachment takes the configuration's.
tofu import berth_volume_attachment.data data/server-a1b2c3
tofu import berth_volume_attachment.data 5
