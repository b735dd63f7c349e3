resource "berth_recipe" "motd" {
  name   = "motd"
  script = <<-EOT
    #!/bin/sh
    echo "Managed by OpenTofu" > /etc/motd
  EOT
}

resource "berth_server" "web" {
  location  = "fsn1"
  plan      = "s1-1c-1g"
  image     = "debian-12"
  recipe_id = berth_recipe.motd.id
}
