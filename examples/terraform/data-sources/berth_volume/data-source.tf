data "berth_volume" "data" {
  name = "data"
}

output "data_device" {
  value = data.berth_volume.data.linux_device
}
