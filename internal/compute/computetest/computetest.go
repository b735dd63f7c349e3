// Package computetest is the conformance suite every compute driver passes: the
// simulated one here, libvirt in its own tier.
package computetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/compute"
)

// Options adapt the suite to drivers whose machines are real.
type Options struct {
	// Settle is how long a freshly created machine may take before it shows CPU and
	// network use (a real guest boots first). 0: at once, as simulated machines do.
	Settle time.Duration
	// ShutdownTimeout is what the suite's graceful shutdowns allow (default 1 min); a
	// real guest asked right after its creation must boot before it can obey.
	ShutdownTimeout time.Duration
}

// Exercise runs the suite against drivers made by newDriver. Machine names are unique
// per call, so drivers may be shared.
func Exercise(t *testing.T, newDriver func(t *testing.T) compute.Driver) {
	ExerciseWith(t, Options{}, newDriver)
}

// ExerciseWith is Exercise with options.
func ExerciseWith(t *testing.T, opts Options, newDriver func(t *testing.T) compute.Driver) {
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = time.Minute
	}
	ctx := context.Background()
	n := 0
	spec := func(t *testing.T) compute.Spec {
		n++
		return compute.Spec{Name: fmt.Sprintf("server-ct%04d", n), VCPUs: 1, MemoryMB: 256, DiskGB: 1, Image: "image-1",
			SSHKeys: []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl t"}}
	}
	state := func(t *testing.T, d compute.Driver, name string, want compute.State) {
		t.Helper()
		m, err := d.Machine(ctx, name)
		if err != nil {
			t.Fatalf("Machine(%s): %v", name, err)
		}
		if m.State != want {
			t.Fatalf("Machine(%s).State = %s, want %s", name, m.State, want)
		}
	}

	t.Run("CreateIsRunningWithAddresses", func(t *testing.T) {
		d := newDriver(t)
		s := spec(t)
		m, err := d.Create(ctx, "k1", s)
		if err != nil {
			t.Fatal(err)
		}
		if m.Name != s.Name || m.IPv4 == "" || m.IPv6 == "" || m.VCPUs != 1 || m.MemoryMB != 256 || m.DiskGB != 1 {
			t.Fatalf("Create = %+v", m)
		}
		state(t, d, s.Name, compute.StateRunning)
		again, err := d.Create(ctx, "k1", s)
		if err != nil || again.IPv4 != m.IPv4 {
			t.Fatalf("repeated Create = %+v, %v; want the same machine", again, err)
		}
	})

	t.Run("AddressesAreDistinct", func(t *testing.T) {
		d := newDriver(t)
		a, err := d.Create(ctx, "a", spec(t))
		if err != nil {
			t.Fatal(err)
		}
		b, err := d.Create(ctx, "b", spec(t))
		if err != nil {
			t.Fatal(err)
		}
		if a.IPv4 == b.IPv4 || a.IPv6 == b.IPv6 {
			t.Fatalf("two machines share an address: %+v %+v", a, b)
		}
	})

	t.Run("PowerCycle", func(t *testing.T) {
		d := newDriver(t)
		s := spec(t)
		if _, err := d.Create(ctx, "c", s); err != nil {
			t.Fatal(err)
		}
		steps := []struct {
			name string
			do   func() error
			want compute.State
		}{
			{"shutdown", func() error { return d.Shutdown(ctx, "s1", s.Name, opts.ShutdownTimeout) }, compute.StateStopped},
			{"start", func() error { return d.Start(ctx, "s2", s.Name) }, compute.StateRunning},
			{"reset", func() error { return d.Reset(ctx, "s3", s.Name) }, compute.StateRunning},
			{"stop", func() error { return d.Stop(ctx, "s4", s.Name) }, compute.StateStopped},
			{"start again", func() error { return d.Start(ctx, "s5", s.Name) }, compute.StateRunning},
			// A step repeated with its key (a resumed job) is not applied twice.
			{"repeat of the first stop", func() error { return d.Stop(ctx, "s4", s.Name) }, compute.StateRunning},
			// Asking for the state a machine is in already is no error.
			{"start while running", func() error { return d.Start(ctx, "s6", s.Name) }, compute.StateRunning},
		}
		for _, st := range steps {
			if err := st.do(); err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
			state(t, d, s.Name, st.want)
		}
	})

	t.Run("DestroyIsIdempotent", func(t *testing.T) {
		d := newDriver(t)
		s := spec(t)
		if _, err := d.Create(ctx, "c", s); err != nil {
			t.Fatal(err)
		}
		if err := d.Destroy(ctx, "d1", s.Name); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Machine(ctx, s.Name); !errors.Is(err, compute.ErrNotFound) {
			t.Fatalf("Machine after Destroy: %v, want ErrNotFound", err)
		}
		if err := d.Destroy(ctx, "d2", s.Name); err != nil {
			t.Fatalf("second Destroy: %v", err)
		}
		if err := d.Destroy(ctx, "d3", "server-never"); err != nil {
			t.Fatalf("Destroy of a machine that never existed: %v", err)
		}
	})

	t.Run("ReinstallAndResize", func(t *testing.T) {
		d := newDriver(t)
		s := spec(t)
		if _, err := d.Create(ctx, "c", s); err != nil {
			t.Fatal(err)
		}
		s.Image = "image-2"
		if err := d.Reinstall(ctx, "r1", s); err != nil {
			t.Fatal(err)
		}
		state(t, d, s.Name, compute.StateRunning)
		if err := d.Stop(ctx, "r2", s.Name); err != nil {
			t.Fatal(err)
		}
		if err := d.Resize(ctx, "r3", s.Name, compute.Size{VCPUs: 2, MemoryMB: 512, DiskGB: 3, Limits: compute.Limits{NetworkMbps: 100, DiskIOPS: 500, DiskMBps: 50}}); err != nil {
			t.Fatal(err)
		}
		m, err := d.Machine(ctx, s.Name)
		if err != nil || m.State != compute.StateStopped || m.VCPUs != 2 || m.MemoryMB != 512 || m.DiskGB != 3 {
			t.Fatalf("after Resize: %+v, %v", m, err)
		}
		// A smaller disk never shrinks the one there is.
		if err := d.Resize(ctx, "r4", s.Name, compute.Size{VCPUs: 1, MemoryMB: 256, DiskGB: 1}); err != nil {
			t.Fatal(err)
		}
		if m, _ := d.Machine(ctx, s.Name); m.VCPUs != 1 || m.DiskGB != 3 {
			t.Fatalf("after a downsize: %+v, want 1 vCPU and the 3 GB disk kept", m)
		}
	})

	t.Run("Snapshots", func(t *testing.T) {
		d := newDriver(t)
		s := spec(t)
		if _, err := d.Create(ctx, "c", s); err != nil {
			t.Fatal(err)
		}
		mem, err := d.Snapshot(ctx, "p1", s.Name, "with-memory", true)
		if err != nil || mem < 1 {
			t.Fatalf("memory snapshot: %d GB, %v", mem, err)
		}
		state(t, d, s.Name, compute.StateRunning)
		if again, err := d.Snapshot(ctx, "p1", s.Name, "with-memory", true); err != nil || again != mem {
			t.Fatalf("repeated Snapshot: %d, %v", again, err)
		}
		if err := d.Stop(ctx, "p2", s.Name); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Snapshot(ctx, "p3", s.Name, "disk", false); err != nil {
			t.Fatal(err)
		}
		// A memory snapshot restores a running guest, whatever is asked.
		if err := d.Restore(ctx, "p4", s.Name, "with-memory", compute.StateStopped); err != nil {
			t.Fatal(err)
		}
		state(t, d, s.Name, compute.StateRunning)
		// A disk-only one ends in the state asked for.
		if err := d.Restore(ctx, "p5", s.Name, "disk", compute.StateStopped); err != nil {
			t.Fatal(err)
		}
		state(t, d, s.Name, compute.StateStopped)
		if err := d.Restore(ctx, "p6", s.Name, "disk", compute.StateRunning); err != nil {
			t.Fatal(err)
		}
		state(t, d, s.Name, compute.StateRunning)
		for _, key := range []string{"p7", "p8"} {
			if err := d.DeleteSnapshot(ctx, key, s.Name, "disk"); err != nil {
				t.Fatalf("DeleteSnapshot (%s): %v", key, err)
			}
		}
		if err := d.Restore(ctx, "p9", s.Name, "disk", compute.StateRunning); err == nil {
			t.Fatal("restored a deleted snapshot")
		}
	})

	t.Run("AbsentMachine", func(t *testing.T) {
		d := newDriver(t)
		for name, call := range map[string]func() error{
			"start":    func() error { return d.Start(ctx, "x1", "server-absent") },
			"shutdown": func() error { return d.Shutdown(ctx, "x2", "server-absent", time.Second) },
			"stop":     func() error { return d.Stop(ctx, "x3", "server-absent") },
			"reset":    func() error { return d.Reset(ctx, "x4", "server-absent") },
			"resize": func() error {
				return d.Resize(ctx, "x5", "server-absent", compute.Size{VCPUs: 1, MemoryMB: 256, DiskGB: 1})
			},
			"reinstall": func() error {
				return d.Reinstall(ctx, "x6", compute.Spec{Name: "server-absent", VCPUs: 1, MemoryMB: 256, DiskGB: 1, Image: "image-1"})
			},
			"snapshot": func() error { _, err := d.Snapshot(ctx, "x7", "server-absent", "s", false); return err },
			"restore":  func() error { return d.Restore(ctx, "x8", "server-absent", "s", compute.StateRunning) },
			"machine":  func() error { _, err := d.Machine(ctx, "server-absent"); return err },
		} {
			if err := call(); !errors.Is(err, compute.ErrNotFound) {
				t.Errorf("%s on an absent machine: %v, want ErrNotFound", name, err)
			}
		}
	})

	t.Run("Stats", func(t *testing.T) {
		d := newDriver(t)
		s := spec(t)
		if _, err := d.Create(ctx, "t1", s); err != nil {
			t.Fatal(err)
		}
		read := func() compute.Stats {
			t.Helper()
			st, err := d.Stats(ctx, s.Name)
			if err != nil {
				t.Fatalf("Stats: %v", err)
			}
			return st
		}
		notBelow := func(a, b compute.Stats) bool {
			return b.CPUTimeNS >= a.CPUTimeNS && b.NetRxBytes >= a.NetRxBytes && b.NetTxBytes >= a.NetTxBytes &&
				b.DiskReadBytes >= a.DiskReadBytes && b.DiskWriteBytes >= a.DiskWriteBytes && !b.At.Before(a.At)
		}
		// A driver that reads many machines at once (compute.StatsBatcher) answers
		// what Stats does: a machine that does not exist in neither map.
		batch, batches := d.(compute.StatsBatcher)
		readAll := func() (compute.Stats, bool) {
			t.Helper()
			got, failed := batch.StatsOf(ctx, []string{"server-absent", s.Name})
			if len(failed) != 0 {
				t.Fatalf("StatsOf: %v", failed)
			}
			if _, ok := got["server-absent"]; ok || len(got) > 1 {
				t.Fatalf("StatsOf read %+v; want no machine that does not exist", got)
			}
			st, ok := got[s.Name]
			return st, ok
		}
		// So does one that reads many machines' power states (compute.StatesBatcher)
		// as Machine does.
		states, statesBatch := d.(compute.StatesBatcher)
		stateAll := func() (compute.State, bool) {
			t.Helper()
			got, failed := states.StatesOf(ctx, []string{"server-absent", s.Name})
			if len(failed) != 0 {
				t.Fatalf("StatesOf: %v", failed)
			}
			if _, ok := got["server-absent"]; ok || len(got) > 1 {
				t.Fatalf("StatesOf read %+v; want no machine that does not exist", got)
			}
			st, ok := got[s.Name]
			return st, ok
		}
		prev := read()
		if !prev.Running || prev.VCPUs != 1 {
			t.Fatalf("Stats of a running machine = %+v", prev)
		}
		for range 3 {
			time.Sleep(20 * time.Millisecond)
			cur := read()
			if !notBelow(prev, cur) {
				t.Fatalf("counters went back: %+v, then %+v", prev, cur)
			}
			prev = cur
		}
		for deadline := time.Now().Add(opts.Settle); prev.CPUTimeNS == 0 || prev.NetRxBytes == 0; {
			if time.Now().After(deadline) {
				t.Fatalf("a running machine used no CPU or network: %+v", prev)
			}
			time.Sleep(200 * time.Millisecond)
			cur := read()
			if !notBelow(prev, cur) {
				t.Fatalf("counters went back: %+v, then %+v", prev, cur)
			}
			prev = cur
		}
		if batches {
			cur, ok := readAll()
			if !ok || !cur.Running || cur.VCPUs != 1 || !notBelow(prev, cur) {
				t.Fatalf("StatsOf of a running machine = %+v (%v) after Stats %+v", cur, ok, prev)
			}
			prev = cur
			if next := read(); !notBelow(cur, next) {
				t.Fatalf("Stats %+v went back from StatsOf %+v", next, cur)
			}
		}
		if statesBatch {
			if st, ok := stateAll(); !ok || st != compute.StateRunning {
				t.Fatalf("StatesOf of a running machine = %q (%v)", st, ok)
			}
		}
		if err := d.Stop(ctx, "t2", s.Name); err != nil {
			t.Fatal(err)
		}
		stopped := read()
		time.Sleep(20 * time.Millisecond)
		if again := read(); again.Running || again.CPUTimeNS != stopped.CPUTimeNS || !notBelow(prev, again) {
			t.Fatalf("stopped machine: %+v, then %+v", stopped, again)
		}
		if batches {
			if all, ok := readAll(); !ok || all.Running || all.CPUTimeNS != stopped.CPUTimeNS || all.NetRxBytes != stopped.NetRxBytes {
				t.Fatalf("StatsOf of a stopped machine = %+v (%v), Stats %+v", all, ok, stopped)
			}
		}
		if statesBatch {
			if st, ok := stateAll(); !ok || st != compute.StateStopped {
				t.Fatalf("StatesOf of a stopped machine = %q (%v)", st, ok)
			}
		}
		if err := d.Destroy(ctx, "t3", s.Name); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{s.Name, "server-absent"} {
			if _, err := d.Stats(ctx, name); !errors.Is(err, compute.ErrNotFound) {
				t.Errorf("Stats(%s): %v, want ErrNotFound", name, err)
			}
		}
		if batches {
			if st, ok := readAll(); ok {
				t.Errorf("StatsOf of a destroyed machine = %+v, want none", st)
			}
		}
		if statesBatch {
			if st, ok := stateAll(); ok {
				t.Errorf("StatesOf of a destroyed machine = %q, want none", st)
			}
		}
	})

	t.Run("CancelledContext", func(t *testing.T) {
		d := newDriver(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := d.Create(cctx, "c", spec(t)); err == nil {
			t.Fatal("Create with a cancelled context succeeded")
		}
	})
}
