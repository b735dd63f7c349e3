resource "berth_project" "web" {
  name = "web"
}
