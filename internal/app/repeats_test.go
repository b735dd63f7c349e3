package app

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestRepeats: a message logged again within the window is held back, and the next
// one written after it says how many were; another message, or the same text at
// another level, is its own; loggers made With attributes share the count.
func TestRepeats(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	var out bytes.Buffer
	log := slog.New(newRepeats(slog.NewTextHandler(&out, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}), 30*time.Second, func() time.Time { return now }))
	fetch := log.With("producer", "default")
	steps := []struct {
		at   time.Duration // since the start
		log  func()
		want string // the line written, "" none
	}{
		{0, func() { fetch.Error("error fetching jobs", "err", "connection refused") }, `level=ERROR msg="error fetching jobs" producer=default err="connection refused"`},
		{100 * time.Millisecond, func() { fetch.Error("error fetching jobs", "err", "connection refused") }, ""},
		{200 * time.Millisecond, func() { log.Error("error fetching jobs", "err", "connection refused") }, ""},
		{300 * time.Millisecond, func() { log.Warn("error fetching jobs") }, `level=WARN msg="error fetching jobs"`},
		{400 * time.Millisecond, func() { log.Error("notifier: listen failed") }, `level=ERROR msg="notifier: listen failed"`},
		{29 * time.Second, func() { fetch.Error("error fetching jobs", "err", "connection refused") }, ""},
		{30 * time.Second, func() { fetch.Error("error fetching jobs", "err", "timeout") }, `level=ERROR msg="error fetching jobs" producer=default err=timeout repeated=3`},
		{30*time.Second + 200*time.Millisecond, func() { log.Warn("error fetching jobs") }, ""},
		{2 * time.Minute, func() { log.Error("error fetching jobs") }, `level=ERROR msg="error fetching jobs"`},
	}
	start := now
	for i, st := range steps {
		now = start.Add(st.at)
		out.Reset()
		st.log()
		if got := strings.TrimSpace(out.String()); got != st.want {
			t.Errorf("step %d (+%s): wrote %q, want %q", i, st.at, got, st.want)
		}
	}
}
