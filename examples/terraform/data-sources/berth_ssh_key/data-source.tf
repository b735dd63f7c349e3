# A key added in the console, used by servers described here.
data "berth_ssh_key" "laptop" {
  name = "laptop"
}
