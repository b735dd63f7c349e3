data "berth_app" "docker" {
  name = "docker"
}
