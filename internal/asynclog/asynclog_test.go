package asynclog_test

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/asynclog"
)

// output is what a Writer writes to: it records each write, and blocks while gate
// is held.
type output struct {
	gate   sync.Mutex
	mu     sync.Mutex
	writes []string
	err    error
}

func (o *output) Write(p []byte) (int, error) {
	o.gate.Lock()
	defer o.gate.Unlock()
	o.mu.Lock()
	defer o.mu.Unlock()
	o.writes = append(o.writes, string(p))
	return len(p), o.err
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return strings.Join(o.writes, "")
}

func (o *output) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.writes)
}

// TestWholeAndInOrder: lines written by many goroutines at once all come out, each
// whole, each goroutine's in its order, in few writes.
func TestWholeAndInOrder(t *testing.T) {
	t.Parallel()
	out := &output{}
	w := asynclog.New(out, time.Millisecond)
	const writers, lines = 8, 2000
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range lines {
				fmt.Fprintf(w, "writer=%d line=%d %s\n", g, i, strings.Repeat("x", i%200))
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	next := make([]int, writers)
	all := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(all) != writers*lines {
		t.Fatalf("%d lines, want %d", len(all), writers*lines)
	}
	for _, l := range all {
		var g, i int
		var pad string
		if _, err := fmt.Sscanf(l, "writer=%d line=%d %s", &g, &i, &pad); err != nil && i%200 != 0 {
			t.Fatalf("line %q: %v", l, err)
		}
		if i != next[g] || len(pad) != i%200 {
			t.Fatalf("line %q: want writer %d's line %d, whole", l, g, next[g])
		}
		next[g]++
	}
	if n := out.count(); n >= writers*lines/10 {
		t.Errorf("%d writes for %d lines: not batched", n, writers*lines)
	}
}

// TestWriteDoesNotWait: while the output is stuck, Write returns at once; what it
// kept comes out when the output moves again.
func TestWriteDoesNotWait(t *testing.T) {
	t.Parallel()
	out := &output{}
	w := asynclog.New(out, time.Millisecond)
	out.gate.Lock() // stuck from now on
	fmt.Fprintln(w, "first")
	time.Sleep(50 * time.Millisecond) // the goroutine is stuck writing it
	start := time.Now()
	for i := range 1000 {
		fmt.Fprintf(w, "line %d\n", i)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("1000 writes took %v while the output was stuck", d)
	}
	out.gate.Unlock()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out.String(), "line 999\n") {
		t.Errorf("output ends %q", out.String()[max(0, len(out.String())-40):])
	}
}

// TestWrittenSoon: without Close, a line is out within about the delay.
func TestWrittenSoon(t *testing.T) {
	t.Parallel()
	out := &output{}
	w := asynclog.New(out, 20*time.Millisecond)
	defer w.Close()
	for round := range 3 {
		line := fmt.Sprintf("round %d\n", round)
		start := time.Now()
		fmt.Fprint(w, line)
		for !strings.HasSuffix(out.String(), line) {
			if time.Since(start) > 10*time.Second {
				t.Fatalf("round %d: not written after 10 s", round)
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// TestFullWritesItself: a Write that fills the memory writes everything at once,
// without waiting for the delay.
func TestFullWritesItself(t *testing.T) {
	t.Parallel()
	out := &output{}
	w := asynclog.New(out, time.Hour)
	defer w.Close()
	line := strings.Repeat("y", 1023) + "\n"
	for range asynclog.DefaultMax / len(line) {
		fmt.Fprint(w, line)
	}
	if got := len(out.String()); got != asynclog.DefaultMax {
		t.Errorf("%d bytes written, want %d", got, asynclog.DefaultMax)
	}
}

// TestClose: Close writes what was kept and returns the output's error; later
// writes go straight out, after it; Close twice is harmless.
func TestClose(t *testing.T) {
	t.Parallel()
	out := &output{err: errors.New("disk full")}
	w := asynclog.New(out, time.Hour)
	fmt.Fprintln(w, "kept")
	if err := w.Close(); err == nil || err.Error() != "disk full" {
		t.Errorf("Close: %v, want the output's error", err)
	}
	if _, err := fmt.Fprintln(w, "after"); err == nil {
		t.Errorf("a Write after Close did not reach the output")
	}
	if err := w.Close(); err != nil {
		t.Errorf("Close again: %v", err)
	}
	if got := out.String(); got != "kept\nafter\n" {
		t.Errorf("output %q", got)
	}
}

// TestUrgent: a warning is out when the logging call returns, with the lines before
// it; an info line waits.
func TestUrgent(t *testing.T) {
	t.Parallel()
	out := &output{}
	w := asynclog.New(out, time.Hour)
	defer w.Close()
	log := slog.New(asynclog.Urgent(slog.NewTextHandler(w, nil), w, slog.LevelWarn)).With("app", "berth")
	log.Info("routine")
	if got := out.String(); got != "" {
		t.Fatalf("an info line was written at once: %q", got)
	}
	log.WithGroup("g").Warn("trouble", "n", 1)
	got := out.String()
	if !strings.Contains(got, "msg=routine") || !strings.Contains(got, "msg=trouble app=berth g.n=1") ||
		strings.Index(got, "routine") > strings.Index(got, "trouble") {
		t.Errorf("output %q, want the info line then the warning", got)
	}
}

// BenchmarkWrite is what a log line costs its caller.
func BenchmarkWrite(b *testing.B) {
	w := asynclog.New(io.Discard, 0)
	defer w.Close()
	line := []byte(`{"time":"2026-11-22T10:00:00.000Z","level":"INFO","msg":"request","request_id":"0f8fad5bd9cb469fa16570867728950e"}` + "\n")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, _ = w.Write(line)
		}
	})
}
