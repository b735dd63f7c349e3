data "berth_image" "debian" {
  location = "fsn1"
  name     = "debian-12"
}
