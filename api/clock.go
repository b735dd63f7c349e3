package api

import "time"

// Clock is an account's test clock (GET and POST /sandbox/v1/clock).
type Clock struct {
	// Now is the time on the account's clock.
	Now time.Time `json:"now"`
}

// ClockAdvance is the body of POST /sandbox/v1/clock.
type ClockAdvance struct {
	// Advance is how far to move the clock: a Go duration such as "72h" or "90m",
	// more than 0 and at most 8760h.
	Advance *string `json:"advance,omitempty"`
}
