// Package sandbox keeps what `berthd serve --sandbox` adds for client authors
// (API-DECISIONS §11): per account, the faults to inject and the journal of its
// latest /v1 requests. It all lives in this process's memory: a restart forgets it,
// and processes serving one database together each keep their own.
package sandbox

import "sync"

// State is the sandbox of one process. It is safe for concurrent use. A nil *State
// is a process without the sandbox.
type State struct {
	mu       sync.Mutex
	accounts map[int64]*account
}

// account is what the sandbox keeps of one account.
type account struct{}

// New returns an empty sandbox.
func New() *State {
	return &State{accounts: map[int64]*account{}}
}
