// Package sandbox keeps what `berthd serve --sandbox` adds for client authors
// (docs/api.md, The sandbox): per account, the faults to inject into its requests and
// operations, and the journal of its latest /v1 requests. It all lives in this
// process's memory: a restart forgets it, and processes serving one database
// together each keep their own.
//
// The sandbox only decides; the faults are carried out by the code that serves
// production: httpapi answers an HTTP fault through its own error writer, and
// worker.Worker fails an operation through its own failure handling.
package sandbox

import (
	"sync"
	"sync/atomic"
)

// State is the sandbox of one process. It is safe for concurrent use. A nil *State
// is a process without the sandbox.
type State struct {
	mu       sync.Mutex
	accounts map[int64]*account
	// decided are the operation faults taken by operations, by operation id, so that
	// the attempts after an operation's first meet the same fault (decided.go).
	decided decisions
	// draw returns a number in [0, 1) for a fault's probability.
	draw func() float64
	// faultSeq and entrySeq number faults and journal entries (ids grow in creation
	// order, as the API's do).
	faultSeq, entrySeq atomic.Int64
}

// account is what the sandbox keeps of one account.
type account struct {
	// faults in the order they were added; exhausted ones stay listed (remaining 0)
	// until deleted or pushed out by new ones (MaxFaults).
	faults  []*Fault
	journal journal
}

// New returns an empty sandbox.
func New() *State {
	return &State{accounts: map[int64]*account{}, draw: randFloat, decided: newDecisions()}
}

// of returns the account's state, creating it; the caller holds s.mu.
func (s *State) of(accountID int64) *account {
	a, ok := s.accounts[accountID]
	if !ok {
		a = &account{}
		s.accounts[accountID] = a
	}
	return a
}
