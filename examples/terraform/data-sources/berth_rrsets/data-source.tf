# The zone's MX records.
data "berth_rrsets" "mx" {
  domain = "example.com"
  type   = "MX"
}
