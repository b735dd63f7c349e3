package app

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// repeatWindow is how long a message River logged again is held back after it was
// written: during a database outage its fetch loop fails every 100 ms, and an
// operator needs to read that it fails, not 50 lines of it a second per process.
const repeatWindow = 30 * time.Second

// repeats is a slog.Handler that writes a message (by level and text) at most once
// a window; the next one written after the window says how many it held back
// (repeated=N). Handlers made from it by WithAttrs and WithGroup share its count.
type repeats struct {
	slog.Handler
	seen *repeatCounts
}

type repeatCounts struct {
	mu     sync.Mutex
	now    func() time.Time
	window time.Duration
	last   map[repeatKey]*repeatState
}

type repeatKey struct {
	level slog.Level
	msg   string
}

type repeatState struct {
	written time.Time
	held    int
}

// newRepeats wraps h, holding back repeats within window by the clock now.
func newRepeats(h slog.Handler, window time.Duration, now func() time.Time) *repeats {
	return &repeats{Handler: h, seen: &repeatCounts{now: now, window: window, last: map[repeatKey]*repeatState{}}}
}

func (r *repeats) Handle(ctx context.Context, rec slog.Record) error {
	held, write := r.seen.take(repeatKey{rec.Level, rec.Message})
	if !write {
		return nil
	}
	if held > 0 {
		rec = rec.Clone()
		rec.AddAttrs(slog.Int("repeated", held))
	}
	return r.Handler.Handle(ctx, rec)
}

// take counts a record of key: write says whether to write it, held how many of
// its repeats were held back since the last one written.
func (c *repeatCounts) take(key repeatKey) (held int, write bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	s, ok := c.last[key]
	if ok && now.Sub(s.written) < c.window {
		s.held++
		return 0, false
	}
	if !ok {
		if len(c.last) >= 1000 { // messages are River's fixed texts; a bound all the same
			clear(c.last)
		}
		s = &repeatState{}
		c.last[key] = s
	}
	held, s.written, s.held = s.held, now, 0
	return held, true
}

func (r *repeats) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &repeats{Handler: r.Handler.WithAttrs(attrs), seen: r.seen}
}

func (r *repeats) WithGroup(name string) slog.Handler {
	return &repeats{Handler: r.Handler.WithGroup(name), seen: r.seen}
}
