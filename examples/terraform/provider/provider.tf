terraform {
  required_providers {
    berth = {
      source = "berth/berth"
    }
  }
}

# The token comes from BERTH_TOKEN (or token = var.berth_token); the URL from
# BERTH_URL, or here.
provider "berth" {
  url = "https://berth.example.com/v1"
}
