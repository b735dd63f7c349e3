# A webhook is imported by its id. Berth shows a webhook's secret only when it creates
# or rotates it, so an imported webhook's secret is null in the state.
tofu import berth_webhook.deploys 3
