data "berth_location" "fsn1" {
  name = "fsn1"
}

# The plans of fsn1 in stock, by name.
output "plans_in_stock" {
  value = [for p in data.berth_location.fsn1.plans : p.name if p.in_stock]
}

# What a GB of volume costs there at most a month ("0.0440"; null where fsn1 sells
# no volumes).
output "volume_price_gb_month" {
  value = data.berth_location.fsn1.volume_price_gb_month
}
