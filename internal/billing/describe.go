package billing

import "github.com/berthhq/berth/internal/hosting"

// Describe says what a ledger entry is, for the transaction history of the API and
// the console alike: the operator's own words when they gave some (text), else a
// message to translate in the reader's language.
func Describe(t hosting.Transaction) (text string, m hosting.Msg) {
	if t.Description != "" {
		return t.Description, hosting.Msg{}
	}
	from := ""
	if t.PeriodStart != nil {
		from = t.PeriodStart.UTC().Format("2006-01-02 15:04 UTC")
	}
	id := "billing." + string(t.Type)
	switch {
	case t.Type == hosting.TxCharge && t.ResourceType == hosting.ResourceServer:
		id = "billing.charge_server"
	case t.Type == hosting.TxCharge && t.ResourceType == hosting.ResourceSnapshot:
		id = "billing.charge_snapshot"
	case t.Type == hosting.TxCharge && t.ResourceType == hosting.ResourceVolume:
		id = "billing.charge_volume"
	case t.Type == hosting.TxRefund && t.ResourceType == hosting.ResourceServer:
		id = "billing.refund_provisioning"
	case t.Type == hosting.TxRefund && t.ResourceType == hosting.ResourceVolume:
		id = "billing.refund_volume"
	case t.Type == hosting.TxCharge && t.ResourceType == hosting.ResourceLicense:
		id = "billing.charge_license"
	case t.Type == hosting.TxRefund && t.ResourceType == hosting.ResourceLicense:
		id = "billing.refund_license"
	}
	return "", hosting.Msg{ID: id, Args: map[string]any{"name": t.ResourceName, "from": from}}
}
