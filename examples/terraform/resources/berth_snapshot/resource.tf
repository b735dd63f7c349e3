resource "berth_snapshot" "before_upgrade" {
  server_id = berth_server.web.id
  name      = "before-upgrade"
}
