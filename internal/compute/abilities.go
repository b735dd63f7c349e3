package compute

import "context"

// Beside Driver, a driver may have abilities that only some drivers have. Berth finds
// them by asking the driver (As), never by being told about them separately.

// Placer is a driver that knows whether a location has room for a machine of a size
// (libvirt: some host of the location has it free). A driver without it has room
// everywhere.
type Placer interface {
	HasRoom(ctx context.Context, locationID int64, vcpus, memoryMB, diskGB int) (bool, error)
}

// Reachability is a driver that knows when the hypervisor of a machine cannot be
// reached now (libvirt: its host is away), so that a change of it answers "try
// later" rather than waiting in the queue.
type Reachability interface {
	Unreachable(ctx context.Context, name string) bool
}

// Unwrapper is a driver that stands for others (a test's fault injector wrapping the
// real one): their abilities are found through it, in the order Unwrap gives them.
type Unwrapper interface {
	Unwrap() []Driver
}

// As finds the ability T of d, or of the drivers d stands for (Unwrapper), depth
// first.
func As[T any](d Driver) (T, bool) {
	if d == nil {
		var zero T
		return zero, false
	}
	if t, ok := d.(T); ok {
		return t, true
	}
	if u, ok := d.(Unwrapper); ok {
		for _, inner := range u.Unwrap() {
			if t, ok := As[T](inner); ok {
				return t, true
			}
		}
	}
	var zero T
	return zero, false
}

// Wrap returns outer, a driver that wraps inner, with the abilities of both found
// through it (As): outer's first, then inner's. Only the calls of Driver go to outer.
func Wrap(outer, inner Driver) Driver {
	if outer == inner {
		return outer
	}
	return wrapped{outer, inner}
}

type wrapped struct {
	Driver
	inner Driver
}

func (w wrapped) Unwrap() []Driver { return []Driver{w.Driver, w.inner} }
