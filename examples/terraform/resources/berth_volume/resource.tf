# 50 GB in fsn1 with an ext4 on it; berth_volume_attachment attaches it.
resource "berth_volume" "data" {
  name     = "data"
  size_gb  = 50
  location = "fsn1"
  format   = "ext4"
}

# Or made on a server, attached once made (and kept attached there).
resource "berth_volume" "scratch" {
  name      = "scratch"
  size_gb   = 10
  server_id = berth_server.web.id
}
