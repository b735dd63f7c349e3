package compute

import (
	"context"
	"net/netip"
)

// Beside Driver, a driver may have abilities that only some drivers have. Berth finds
// them by asking the driver (As), never by being told about them separately.

// Placer is a driver that knows whether a location has room for a machine of a size
// (libvirt: some host of the location has it free). A driver without it has room
// everywhere.
type Placer interface {
	HasRoom(ctx context.Context, locationID int64, vcpus, memoryMB, diskGB int) (bool, error)
}

// Networks is a driver that gives its machines addresses from networks of its own
// (libvirt: its address pools). A webhook never delivers into them (docs/webhooks.md,
// "Where Berth delivers").
type Networks interface {
	Networks(ctx context.Context) ([]netip.Prefix, error)
}

// Reachability is a driver that knows when the hypervisor of a machine cannot be
// reached now (libvirt: its host is away), so that a change of it answers "try
// later" rather than waiting in the queue.
type Reachability interface {
	Unreachable(ctx context.Context, name string) bool
}

// Hosted is a driver whose machines run on hosts Berth reaches over the network
// (libvirt), where a guest also changes by itself (it powers itself off). A process
// that works operations connects to every host as it starts (ConnectHosts: what a new
// connection sets up on a host then reaches all of them, not only those whose
// machines are touched), shows each host in the operators' metrics (HostUsage;
// docs/operating.md, Metrics), and follows its machines' power states (internal/app's
// reconcile loop).
type Hosted interface {
	// ConnectHosts connects to every host; the error names those it could not reach.
	ConnectHosts(ctx context.Context) error
	// HostUsage lists the hosts with their capacity and what their machines take.
	HostUsage(ctx context.Context) ([]HostUsage, error)
}

// HostUsage is one host of a Hosted driver: what Berth may place there, what is
// placed, and whether this process reached it.
type HostUsage struct {
	ID, LocationID int64
	// Address is the host part of its URI, without user, port or parameters (which
	// may name key files); "local" for a local socket.
	Address                string
	VCPUs, UsedVCPUs       int
	MemoryMB, UsedMemoryMB int
	DiskGB, UsedDiskGB     int
	Machines               int
	// Draining: no new machines are placed there.
	Draining bool
	// Reachable is false when this process's last attempt to reach it failed (a host
	// not tried since the process started counts as reachable).
	Reachable bool
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
