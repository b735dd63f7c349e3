# A zone on the operator's nameservers; delegate it at its registrar to the
# nameservers it lists.
resource "berth_domain" "example" {
  name = "example.com"
}

output "nameservers" {
  value = berth_domain.example.nameservers
}
