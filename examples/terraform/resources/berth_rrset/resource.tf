# The web server's addresses at the apex and at www.
resource "berth_rrset" "apex" {
  domain  = berth_domain.example.id
  name    = "@"
  type    = "A"
  records = [{ value = berth_server.web.ipv4 }]
}

resource "berth_rrset" "www" {
  domain  = berth_domain.example.id
  name    = "www"
  type    = "CNAME"
  records = [{ value = "@" }]
}

# Mail, with a TTL of its own; "mail" is mail.example.com., as Berth writes it.
resource "berth_rrset" "mx" {
  domain = berth_domain.example.id
  name   = "@"
  type   = "MX"
  ttl    = 600
  records = [
    { value = "10 mail", comment = "primary" },
    { value = "20 mail.backup.example.net." },
  ]
}
