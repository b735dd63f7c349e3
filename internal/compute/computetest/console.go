package computetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/compute"
)

// ConsoleOptions adapt the console suite to a driver.
type ConsoleOptions struct {
	// Ready is what a machine's console prints once the guest takes input (a login
	// prompt, a shell's banner).
	Ready string
	// Settle bounds how long a fresh machine may take to print Ready (default 10 s):
	// a cap for a broken guest. The suite's later waits derive from the boot it sees.
	Settle time.Duration
}

// Reader collects what a console prints, in the background, for Wait to look at.
type Reader struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	err  error
	done chan struct{}
}

// Follow starts collecting what r prints until it fails (io.EOF at its end).
func Follow(r io.Reader) *Reader {
	c := &Reader{done: make(chan struct{})}
	go func() {
		defer close(c.done)
		b := make([]byte, 4096)
		for {
			n, err := r.Read(b)
			c.mu.Lock()
			c.buf.Write(b[:n])
			if err != nil {
				c.err = err
			}
			c.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return c
}

// Text is what was printed so far.
func (c *Reader) Text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// Wait waits until the text printed after from (a length of Text) holds want, and
// returns where it ends; it fails the test when timeout passes or the output ends.
func (c *Reader) Wait(t testing.TB, from int, want string, timeout time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		c.mu.Lock()
		text, err := c.buf.String(), c.err
		c.mu.Unlock()
		if i := bytes.Index([]byte(text[min(from, len(text)):]), []byte(want)); i >= 0 {
			return min(from, len(text)) + i + len(want)
		}
		if err != nil {
			t.Fatalf("console ended (%v) before printing %q; it printed:\n%s", err, want, text)
		}
		if time.Now().After(deadline) {
			t.Fatalf("console did not print %q in %v; it printed:\n%s", want, timeout, text)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Ended waits until the output ends and returns its error (io.EOF for a clean end).
func (c *Reader) Ended(t testing.TB, timeout time.Duration) error {
	t.Helper()
	select {
	case <-c.done:
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.err
	case <-time.After(timeout):
		t.Fatalf("console still open after %v; it printed:\n%s", timeout, c.Text())
		return nil
	}
}

// ExerciseConsole is the console part of the suite: a running machine's console
// prints its guest's output and takes input, a stopped or absent one has none, and a
// power-off ends the output.
func ExerciseConsole(t *testing.T, opts ConsoleOptions, newDriver func(t *testing.T) compute.Driver) {
	if opts.Settle <= 0 {
		opts.Settle = 10 * time.Second
	}
	ctx := context.Background()
	d := newDriver(t)
	s := compute.Spec{Name: "server-cons01", VCPUs: 1, MemoryMB: 256, DiskGB: 1, Image: "image-1"}

	if _, err := d.Console(ctx, "server-absent"); !errors.Is(err, compute.ErrNotFound) {
		t.Fatalf("Console of an absent machine: %v, want ErrNotFound", err)
	}
	if _, err := d.Create(ctx, "create", s); err != nil {
		t.Fatal(err)
	}
	con, err := d.Console(ctx, s.Name)
	if err != nil {
		t.Fatalf("Console: %v", err)
	}
	out := Follow(con)
	start := time.Now()
	at := out.Wait(t, 0, opts.Ready, opts.Settle)
	// The waits below are bounded by the boot just seen: a loaded machine is slow at
	// everything.
	slack := max(10*time.Second, time.Since(start))

	// What is typed comes back: a terminal echoes it.
	line := fmt.Sprintf("typed-%d", time.Now().UnixNano()%100000)
	if _, err := io.WriteString(con, line+"\r"); err != nil {
		t.Fatalf("Write: %v", err)
	}
	out.Wait(t, at, line, slack)

	// Closing detaches: the output ends, typing fails, the machine runs on.
	if err := con.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	out.Ended(t, slack)
	if _, err := con.Write([]byte("x")); err == nil {
		t.Error("Write after Close succeeded")
	}
	if m, err := d.Machine(ctx, s.Name); err != nil || m.State != compute.StateRunning {
		t.Fatalf("after the console closed: %+v, %v; want it running", m, err)
	}

	// A power-off ends an attached console's output.
	con, err = d.Console(ctx, s.Name)
	if err != nil {
		t.Fatalf("Console again: %v", err)
	}
	defer con.Close()
	out = Follow(con)
	if err := d.Stop(ctx, "stop", s.Name); err != nil {
		t.Fatal(err)
	}
	out.Ended(t, slack)
	if _, err := d.Console(ctx, s.Name); !errors.Is(err, compute.ErrNotRunning) {
		t.Fatalf("Console of a stopped machine: %v, want ErrNotRunning", err)
	}
}
