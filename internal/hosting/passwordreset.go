package hosting

import "time"

// PasswordReset lets the holder of a mailed link set an account's console password
// (issue 31; docs/operating.md, Mail). Like a token, its secret is never stored,
// only its SHA-256 hash. It is spent by the first new password set with it, and is
// good until ExpiresAt (PasswordResetTTL after it was asked for).
type PasswordReset struct {
	ID        int64
	AccountID int64
	Hash      []byte
	CreatedAt time.Time
	ExpiresAt time.Time
	// UsedAt is when a password was set with it, or another reset of its account
	// was spent (nil: neither yet).
	UsedAt *time.Time
}

// PasswordResetTTL is how long a password-reset link works.
const PasswordResetTTL = time.Hour
