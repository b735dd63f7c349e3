package hosting

import "time"

// What the ledger charges for.
const (
	ResourceServer   = "server"
	ResourceSnapshot = "snapshot"
)

// Meter charges one billable resource (a server, a stored snapshot) for each hour of
// its life as the hour starts (docs/api.md, Billing).
type Meter struct {
	ID           int64
	AccountID    int64
	ResourceType string
	ResourceID   int64
	ResourceName string
	// Rate is the price of one hour; MonthlyCap the most charged per calendar month
	// (nil: no cap).
	Rate       Money
	MonthlyCap *Money
	StartedAt  time.Time
	// NextAt is the start of the next hour to charge; nil once the meter is finished.
	NextAt *time.Time
	// StoppedAt: no hour starting at or after it is charged (the resource is gone).
	StoppedAt *time.Time
	// MonthCharged is what the calendar month starting at MonthStart was charged.
	MonthStart   time.Time
	MonthCharged Money
}

// Active reports whether the meter still charges hours to come.
func (m *Meter) Active() bool { return m.NextAt != nil && m.StoppedAt == nil }
