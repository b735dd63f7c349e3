resource "berth_ssh_key" "laptop" {
  name       = "laptop"
  public_key = file("~/.ssh/id_ed25519.pub")
}

resource "berth_project" "web" {
  name = "web"
}

data "berth_license" "plesk" {
  name = "plesk-web-admin"
}

resource "berth_server" "web" {
  display_name = "web-1"
  location     = "fsn1"
  plan         = "s2-2c-4g"
  image        = "debian-12"
  project_id   = berth_project.web.id
  ssh_key_ids  = [berth_ssh_key.laptop.id]
  licenses     = [data.berth_license.plesk.id] # added and removed in place

  timeouts {
    create = "30m"
  }
}

# A one-click app on the location's Ubuntu image, kept stopped.
resource "berth_server" "docker" {
  location    = "fsn1"
  plan        = "s1-1c-1g"
  app         = "docker"
  power_state = "stopped"
}

# Windows: Berth adds the license the image requires (windows-server-standard)
# itself; it need not be listed in licenses.
resource "berth_server" "windows" {
  location = "fsn1"
  plan     = "s2-2c-4g"
  image    = "windows-server-2022"
}

output "web_ipv4" {
  value = berth_server.web.ipv4
}
