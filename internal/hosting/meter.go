package hosting

import "time"

// What the ledger charges for.
const (
	ResourceServer   = "server"
	ResourceSnapshot = "snapshot"
)

// Meter charges one billable resource (a server, a stored snapshot, a volume) for
// each hour of its life as the hour starts (docs/api.md, Billing). A meter never
// changes once written, but for StoppedAt, set once: the hours it charges, and what
// each costs, follow from its fields alone, so the ledger's charges of a metering
// pass are derived from the meters (billing.Lines) rather than written one by one.
// A new price (a rescale, a resize) or a restart opens another meter for the same
// resource from its next hour, carrying what the month was charged already.
type Meter struct {
	ID           int64
	AccountID    int64
	ResourceType string
	ResourceID   int64
	ResourceName string
	// Rate is the price of one hour; MonthlyCap the most charged per calendar month
	// (nil: no cap), over every meter of the resource.
	Rate       Money
	MonthlyCap *Money
	StartedAt  time.Time
	// BilledFrom is the start of the first hour the metering pass charges; the meter's
	// hours start there and every hour after, before StoppedAt.
	BilledFrom time.Time
	// StoppedAt: no hour starting at or after it is charged (the resource is gone).
	StoppedAt *time.Time
	// MonthCharged is what the resource was charged before BilledFrom in the calendar
	// month starting at MonthStart (its first hour, paid when it came into being, or
	// the hours of the meters before this one): the monthly cap counts it.
	MonthStart   time.Time
	MonthCharged Money
}

// Active reports whether the meter charges hours to come.
func (m *Meter) Active() bool { return m.StoppedAt == nil }
