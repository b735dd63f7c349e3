// Package compute is the narrow seam between Berth and whatever runs machines: the
// simulated driver for sandboxes and tests, libvirt for real guests.
//
// Every mutating call takes a key, unique per step of an operation: a driver applies a
// call whose key it has already applied at most once, so a job resumed after a crash can
// repeat every step safely and each change still happens exactly once.
package compute

import (
	"context"
	"errors"
	"io"
	"time"
)

// State is the power state of a machine as the driver sees it.
type State string

const (
	StateRunning State = "running"
	StateStopped State = "stopped"
	StateAbsent  State = "absent"
)

// Spec describes a machine to create.
type Spec struct {
	Name     string // the server's name; also the hostname
	VCPUs    int
	MemoryMB int
	DiskGB   int
	Image    string // image identifier understood by the driver
	SSHKeys  []string
	// RootPassHash is a crypt(3)-style hash, or empty.
	RootPassHash string
	// UserScripts run once at first boot (the app's installer, then the recipe).
	UserScripts []string
	// LocationID is where the machine must run (0: anywhere); drivers with several
	// locations' hosts place by it.
	LocationID int64
	// Limits cap the machine's throughput (its plan's).
	Limits Limits
}

// Size is what a plan gives a machine: vCPUs, memory, disk, and the limits on its
// throughput.
type Size struct {
	VCPUs    int
	MemoryMB int
	DiskGB   int
	Limits   Limits
}

// Limits cap a machine's network and disk throughput, as a plan sells them; a zero
// field is no limit. Drivers that run no real guests may ignore them.
type Limits struct {
	// NetworkMbps caps each direction of the machine's network, in megabits (10^6
	// bits) per second.
	NetworkMbps int
	// DiskIOPS caps the disk's read and write operations per second, together.
	DiskIOPS int
	// DiskMBps caps the bytes read and written per second, together, in megabytes
	// (10^6 bytes).
	DiskMBps int
}

// Machine is what the driver knows of one machine.
type Machine struct {
	Name     string
	State    State
	VCPUs    int
	MemoryMB int
	DiskGB   int
	IPv4     string
	IPv6     string
}

var (
	// ErrNotFound: no machine of that name exists.
	ErrNotFound = errors.New("compute: machine not found")
	// ErrShutdownTimeout: the guest ignored a graceful shutdown until the timeout.
	ErrShutdownTimeout = errors.New("compute: guest did not shut down in time")
	// ErrFailed: the change cannot be made, and trying again will not help (no room,
	// a broken image): the operation fails at once rather than retrying.
	ErrFailed = errors.New("compute: failed")
	// ErrUnavailable: the driver cannot reach its hypervisor now; retry later.
	ErrUnavailable = errors.New("compute: unavailable")
	// ErrNotRunning: the machine exists but is not running (a console needs it on).
	ErrNotRunning = errors.New("compute: machine not running")
)

// CreateSteps are the steps of making a machine (Create, and a Reinstall's rewrite),
// in order: its disk, its seed (the first-boot settings), its definition on the
// hypervisor, and its start. A Create that fails at one leaves what the steps before
// it made, and the machine's address; Destroy removes all of it (docs/states.md: a
// failed provisioning is undone).
var CreateSteps = []string{"disk", "seed", "define", "start"}

// CreateFault is a test's fault in the making of a machine: asked with the machine's
// name before each of CreateSteps, an error fails the step, leaving what the steps
// before it made, as a hypervisor failing there does. Drivers take one in their
// options (nil: none); production never sets it.
type CreateFault func(name, step string) error

// Driver runs machines. Calls block until the change is done (or ctx ends) and are
// safe to repeat with the same key.
type Driver interface {
	// Create makes and boots a machine; it returns once the machine is running.
	Create(ctx context.Context, key string, spec Spec) (Machine, error)
	// Start boots a stopped machine.
	Start(ctx context.Context, key, name string) error
	// Shutdown asks the guest to power off (ACPI) and waits up to timeout; it answers
	// ErrShutdownTimeout, leaving the machine running, when the guest ignores it.
	Shutdown(ctx context.Context, key, name string, timeout time.Duration) error
	// Stop powers a machine off at once (pulls the plug).
	Stop(ctx context.Context, key, name string) error
	// Reset restarts a running machine at once (hard reset).
	Reset(ctx context.Context, key, name string) error
	// Reinstall wipes the machine's disk, writes spec.Image afresh and boots it with
	// spec's first-boot settings; the machine ends running.
	Reinstall(ctx context.Context, key string, spec Spec) error
	// Resize sets a stopped machine's vCPUs, memory and limits and grows its disk to
	// size.DiskGB (a smaller one leaves the disk as it is); the machine stays stopped.
	Resize(ctx context.Context, key, name string, size Size) error
	// Snapshot saves the machine's disk as snap, and its memory too when withMemory
	// (the machine must then be running; it keeps running). It returns the size the
	// snapshot takes, in whole GB (at least 1). A snapshot holds no volume: a stopped
	// machine's leaves its volumes out (they stay attached); a running machine with
	// volumes attached is not snapshotted (ErrFailed; docs/volumes.md, Snapshots).
	Snapshot(ctx context.Context, key, name, snap string, withMemory bool) (sizeGB int, err error)
	// Restore reverts the machine to snap. From a memory snapshot it ends running,
	// where the guest was; from a disk-only one it ends in state after (running or
	// stopped).
	Restore(ctx context.Context, key, name, snap string, after State) error
	// DeleteSnapshot removes snap; deleting an absent snapshot is no error.
	DeleteSnapshot(ctx context.Context, key, name, snap string) error
	// Destroy removes a machine and its disks; destroying an absent machine is no error.
	Destroy(ctx context.Context, key, name string) error
	// Machine reports a machine's state; ErrNotFound when it does not exist.
	Machine(ctx context.Context, name string) (Machine, error)
	// Stats reads a machine's cumulative counters (ErrNotFound when it does not
	// exist). Rates are differences of two readings; a counter may restart from zero
	// when the machine does, as libvirt's do.
	Stats(ctx context.Context, name string) (Stats, error)
	// Console attaches to a running machine's serial console: Read gives what the
	// guest prints from now on, Write types into it, Close detaches (the guest keeps
	// running). Reads end with io.EOF when the machine stops. ctx bounds only the
	// attaching. ErrNotFound when the machine does not exist, ErrNotRunning when it is
	// not running, ErrUnavailable when its host cannot be reached.
	Console(ctx context.Context, name string) (io.ReadWriteCloser, error)
}

// StatsBatcher is a driver that reads the counters of many machines at once, as the
// metrics sampler does every interval (the libvirt driver: one call a host). got
// holds each machine read; failed each machine whose read failed, with why (its
// host could not be reached, the store could not be read): one host's failure is
// not the others'. A machine in neither does not exist.
type StatsBatcher interface {
	StatsOf(ctx context.Context, names []string) (got map[string]Stats, failed map[string]error)
}

// StatesBatcher is a driver that reads the power state of many machines at once, as
// the reconcile loop of a Hosted driver does every few seconds (the libvirt driver:
// one call a host). got holds each machine read; failed each machine whose read
// failed, with why (its host could not be reached): one host's failure is not the
// others'. A machine in neither does not exist. The batch may be looser than Machine
// (libvirt reads the domains' names and not Berth's marker in each): a caller
// confirms a state it acts on with Machine.
type StatesBatcher interface {
	StatesOf(ctx context.Context, names []string) (got map[string]State, failed map[string]error)
}

// Stats are a machine's cumulative counters at one moment, as libvirt's domain stats
// report them. A stopped machine's counters do not move.
type Stats struct {
	At             time.Time
	Running        bool
	VCPUs          int
	CPUTimeNS      uint64 // CPU time used by all vCPUs, in nanoseconds
	NetRxBytes     uint64 // received by the guest
	NetTxBytes     uint64 // sent by the guest
	DiskReadBytes  uint64
	DiskWriteBytes uint64
}
