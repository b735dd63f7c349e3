resource "berth_webhook" "deploys" {
  url         = "https://hooks.example.com/berth"
  event_types = ["server.*", "operation.failed"]
}

# The secret that signs the deliveries, for the receiver's configuration.
output "webhook_secret" {
  value     = berth_webhook.deploys.secret
  sensitive = true
}
