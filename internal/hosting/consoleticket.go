package hosting

import "time"

// ConsoleTicket lets one WebSocket connection attach to a server's serial console.
// Like a token, its secret is never stored, only its SHA-256 hash. It is spent by
// the first connection that presents it and is good until ExpiresAt.
type ConsoleTicket struct {
	ID        int64
	AccountID int64
	ServerID  int64
	Hash      []byte
	CreatedAt time.Time
	ExpiresAt time.Time
	// UsedAt is when a connection spent it (nil: not yet).
	UsedAt *time.Time
}

// ConsoleSession is an open connection to a server's serial console, as it counts
// against the caps on sessions per server and per account. It holds its place until
// ExpiresAt, which the process serving it (Holder) moves on while the connection
// lasts, and it is removed when the connection ends.
type ConsoleSession struct {
	ID        int64
	AccountID int64
	ServerID  int64
	// Holder names the berthd process that serves the connection.
	Holder    string
	StartedAt time.Time
	ExpiresAt time.Time
}
