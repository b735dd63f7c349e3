// Package revert undoes the steps of a change that did not complete, newest first,
// as incus's shared/revert does: each step, once done, registers how to undo it
// (Add); the change then either keeps everything (Success) or undoes it (Fail).
//
// An undo may fail (a hypervisor away): Fail then keeps it, with those after it, for
// the next Fail, so a caller that is retried (a job) undoes each step until it is
// undone. Undos must therefore be safe to repeat (docs/states.md: an undo is a driver
// step with a key of its own).
package revert

import "fmt"

// Reverter is a stack of undos. The zero value is empty and ready to use.
type Reverter struct {
	undo []func() error
}

// New returns an empty Reverter.
func New() *Reverter { return &Reverter{} }

// Add registers how to undo a step that has been done.
func (r *Reverter) Add(undo func() error) { r.undo = append(r.undo, undo) }

// Fail undoes the steps registered, newest first. It stops at the first undo that
// fails and returns its error, keeping that undo and the older ones for the next
// Fail; the ones it ran are forgotten.
func (r *Reverter) Fail() error {
	for len(r.undo) > 0 {
		last := len(r.undo) - 1
		if err := r.undo[last](); err != nil {
			return fmt.Errorf("undo: %w", err)
		}
		r.undo = r.undo[:last]
	}
	return nil
}

// Success forgets the undos: the change is kept whole. Fail afterwards does nothing.
func (r *Reverter) Success() { r.undo = nil }
