resource "berth_ssh_key" "laptop" {
  name       = "laptop"
  public_key = file("~/.ssh/id_ed25519.pub")
}

resource "berth_project" "web" {
  name = "web"
}

resource "berth_server" "web" {
  display_name = "web-1"
  location     = "fsn1"
  plan         = "s2-2c-4g"
  image        = "debian-12"
  project_id   = berth_project.web.id
  ssh_key_ids  = [berth_ssh_key.laptop.id]

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

output "web_ipv4" {
  value = berth_server.web.ipv4
}
