data "berth_plan" "small" {
  location = "fsn1"
  name     = "s1-1c-1g"
}

output "small_monthly" {
  value = data.berth_plan.small.price_monthly
}
