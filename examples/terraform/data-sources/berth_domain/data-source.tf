data "berth_domain" "example" {
  name = "example.com"
}
