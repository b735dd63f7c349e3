data "berth_location" "fsn1" {
  name = "fsn1"
}

# The plans of fsn1 in stock, by name.
output "plans_in_stock" {
  value = [for p in data.berth_location.fsn1.plans : p.name if p.in_stock]
}
