data "berth_project" "web" {
  name = "web"
}

output "web_servers" {
  value = data.berth_project.web.server_count
}
