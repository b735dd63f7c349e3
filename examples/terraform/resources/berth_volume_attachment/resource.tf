# The volume attached to the server, its ext4 mounted by the guest at /mnt/volume-<id>.
resource "berth_volume_attachment" "data" {
  volume_id = berth_volume.data.id
  server_id = berth_server.web.id
  automount = true
}
