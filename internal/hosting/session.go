package hosting

import "time"

// Session is an account holder signed in to the console. Like a token, its secret is
// never stored, only its SHA-256 hash; it ends at ExpiresAt or when its holder signs
// out.
type Session struct {
	ID        int64
	AccountID int64
	Hash      []byte
	CreatedAt time.Time
	ExpiresAt time.Time
}

// Usable reports whether the session may authenticate a request at now.
func (s *Session) Usable(now time.Time) bool { return now.Before(s.ExpiresAt) }

// DaySpend is what an account's charges net of refunds came to for the hours of one
// UTC day.
type DaySpend struct {
	Day   time.Time // 00:00 UTC
	Spent Money
}
