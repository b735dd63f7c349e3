data "berth_servers" "web" {
  project_id = berth_project.web.id
}

output "web_addresses" {
  value = { for s in data.berth_servers.web.servers : s.name => s.ipv4 }
}
