# The web server's IPv4 address points back to www.example.com.
resource "berth_server_rdns" "web" {
  server = berth_server.web.id
  ip     = berth_server.web.ipv4
  ptr    = "www.example.com"
}
