data "berth_account" "me" {}

output "days_left" {
  value = data.berth_account.me.days_left
}
