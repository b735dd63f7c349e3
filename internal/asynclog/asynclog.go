// Package asynclog writes a log without making its callers wait on the output: a
// Writer keeps what it is given in memory and a goroutine of its own hands it to the
// output (berthd's stderr) in one write, soon after. A request that logs a line then
// never waits on a slow terminal, a full pipe or a busy journald.
//
// Nothing is lost and nothing interleaves: each Write is kept whole and in order,
// Flush and Close write everything kept so far, a Write that finds the memory full
// writes it all itself (the caller waits, as it would without a Writer), and after
// Close every Write goes straight to the output. What a process that dies without
// Close kept meanwhile is lost: a Handler built with Urgent flushes after each record
// of a level that matters (warnings and errors), so the lines that explain a crash
// are out before it.
package asynclog

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// DefaultDelay is how long a line waits at most before it is written (under a
// Writer of New(out, 0)).
const DefaultDelay = 100 * time.Millisecond

// DefaultMax is how much a Writer keeps before a Write writes it all itself.
const DefaultMax = 256 << 10

// Writer is an io.Writer that writes to another later. It is safe for concurrent use.
type Writer struct {
	out   io.Writer
	delay time.Duration
	max   int

	// out is written under outMu only, which keeps the writes in order.
	outMu sync.Mutex
	spare []byte // an empty buffer to swap in (under outMu)

	mu     sync.Mutex
	buf    []byte
	closed bool

	kick      chan struct{} // a line waits
	done      chan struct{} // Close was called
	stopped   chan struct{} // the goroutine ended
	closeOnce sync.Once
}

// New returns a Writer that writes what it is given to out at most delay later
// (0: DefaultDelay), keeping at most DefaultMax bytes. Close it to write the rest and
// stop its goroutine.
func New(out io.Writer, delay time.Duration) *Writer {
	if delay <= 0 {
		delay = DefaultDelay
	}
	w := &Writer{out: out, delay: delay, max: DefaultMax,
		kick: make(chan struct{}, 1), done: make(chan struct{}), stopped: make(chan struct{})}
	go w.run()
	return w
}

// Write keeps a copy of p to write later, and returns at once: its error is always
// nil, an error of the output is Flush's. Only when the Writer keeps DefaultMax
// bytes or more does Write write them itself; after Close, it writes p itself.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		w.outMu.Lock()
		defer w.outMu.Unlock()
		return w.out.Write(p)
	}
	first := len(w.buf) == 0
	w.buf = append(w.buf, p...)
	full := len(w.buf) >= w.max
	w.mu.Unlock()
	if full {
		_ = w.Flush()
	} else if first {
		select {
		case w.kick <- struct{}{}:
		default:
		}
	}
	return len(p), nil
}

// Flush writes everything kept so far to the output, in one write, and returns its
// error.
func (w *Writer) Flush() error {
	w.outMu.Lock()
	defer w.outMu.Unlock()
	return w.flushLocked()
}

// flushLocked is Flush under outMu.
func (w *Writer) flushLocked() error {
	w.mu.Lock()
	b := w.buf
	if len(b) == 0 {
		w.mu.Unlock()
		return nil
	}
	w.buf, w.spare = w.spare[:0], nil // the two never share memory
	w.mu.Unlock()
	_, err := w.out.Write(b)
	if cap(b) <= w.max*2 { // keep the memory of an ordinary burst, not of a huge line
		w.spare = b[:0]
	} else {
		w.spare = nil
	}
	return err
}

// Close writes everything kept and stops the goroutine; later Writes write
// themselves. It returns the output's error, and may be called more than once.
func (w *Writer) Close() error {
	var err error
	w.closeOnce.Do(func() {
		close(w.done)
		<-w.stopped
		w.outMu.Lock()
		defer w.outMu.Unlock()
		w.mu.Lock()
		w.closed = true // a Write from now on waits for outMu, so comes out after this
		w.mu.Unlock()
		err = w.flushLocked()
	})
	return err
}

// run writes what was kept, delay after the first Write since the last write.
func (w *Writer) run() {
	defer close(w.stopped)
	t := time.NewTimer(w.delay)
	t.Stop()
	for {
		select {
		case <-w.kick:
		case <-w.done:
			return
		}
		t.Reset(w.delay)
		select {
		case <-t.C:
		case <-w.done:
			t.Stop()
			return
		}
		_ = w.Flush()
	}
}

// Urgent returns h, which writes to w, made to flush w after every record of level
// min or above: those lines (and every line before them) are out when the logging
// call returns.
func Urgent(h slog.Handler, w *Writer, min slog.Level) slog.Handler {
	return &urgent{Handler: h, w: w, min: min}
}

type urgent struct {
	slog.Handler
	w   *Writer
	min slog.Level
}

func (u *urgent) Handle(ctx context.Context, r slog.Record) error {
	err := u.Handler.Handle(ctx, r)
	if r.Level >= u.min {
		if ferr := u.w.Flush(); err == nil {
			err = ferr
		}
	}
	return err
}

func (u *urgent) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &urgent{Handler: u.Handler.WithAttrs(attrs), w: u.w, min: u.min}
}

func (u *urgent) WithGroup(name string) slog.Handler {
	return &urgent{Handler: u.Handler.WithGroup(name), w: u.w, min: u.min}
}
