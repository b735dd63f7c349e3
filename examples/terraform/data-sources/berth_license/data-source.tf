data "berth_license" "plesk" {
  name = "plesk-web-admin"
}

output "plesk_price" {
  value = "${data.berth_license.plesk.price_monthly} a month, per ${data.berth_license.plesk.per}"
}
