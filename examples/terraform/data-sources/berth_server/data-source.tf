data "berth_server" "db" {
  name = "server-a1b2c3"
}

output "db_ipv4" {
  value = data.berth_server.db.ipv4
}
