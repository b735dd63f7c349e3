package libvirtdriver

import (
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/compute"
)

// newWatchedConsole is a console as Console makes it, on no connection: its hang-up
// is spent already, so ending it touches no libvirtd (the libvirt tier's
// TestConsoleConformance has the real one).
func newWatchedConsole() *console {
	in, typed := io.Pipe()
	c := &console{in: in, typed: typed, out: compute.NewConsoleOutput(consoleBuffer), done: make(chan struct{})}
	c.hangUp.Do(func() {})
	return c
}

// TestConsoleEndsWhenItsGuestStops: a console whose stream libvirtd leaves open after
// the guest stopped ends anyway, cleanly (io.EOF), once the driver sees the guest
// stopped; not while it runs, nor when the driver cannot tell.
func TestConsoleEndsWhenItsGuestStops(t *testing.T) {
	t.Parallel()
	c := newWatchedConsole()
	var asked atomic.Int32
	runs := func() (bool, error) {
		switch asked.Add(1) {
		case 1:
			return true, nil
		case 2:
			return false, errors.New("host 1 unreachable")
		}
		return false, nil
	}
	streamed, stopped := make(chan struct{}), make(chan struct{})
	defer close(streamed)
	go c.watch(runs, streamed, stopped)
	select {
	case <-stopped:
	case <-time.After(time.Minute):
		t.Fatal("the console did not end a minute after its guest stopped")
	}
	if n := asked.Load(); n != 3 {
		t.Errorf("ended after %d asks, want 3 (running, unknown, stopped)", n)
	}
	read := make(chan error, 1)
	go func() {
		b, err := io.ReadAll(c.out)
		if err == nil && len(b) != 0 {
			err = errors.New("it printed " + string(b))
		}
		read <- err
	}()
	select {
	case err := <-read:
		if err != nil {
			t.Errorf("the output did not end cleanly: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the output is still open after the console ended")
	}
	if _, err := c.typed.Write([]byte("x")); err == nil {
		t.Error("typing into an ended console succeeded")
	}
}

// TestConsoleWatchEndsWithItsStream: once the stream has ended by itself, the watch
// stops asking and ends nothing.
func TestConsoleWatchEndsWithItsStream(t *testing.T) {
	t.Parallel()
	c := newWatchedConsole()
	var asked atomic.Int32
	runs := func() (bool, error) { asked.Add(1); return false, nil }
	streamed, stopped := make(chan struct{}), make(chan struct{})
	close(streamed)
	returned := make(chan struct{})
	go func() {
		c.watch(runs, streamed, stopped)
		close(returned)
	}()
	select {
	case <-returned:
	case <-time.After(time.Minute):
		t.Fatal("the watch went on after its stream ended")
	}
	select {
	case <-stopped:
		t.Error("the watch ended a console whose stream had ended by itself")
	default:
	}
	if n := asked.Load(); n != 0 {
		t.Errorf("the watch asked %d times after its stream ended", n)
	}
}
