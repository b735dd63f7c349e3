package asynclog_test

import (
	"bytes"
	"context"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/asynclog"
)

// A line built through LineHandler is byte for byte the line slog's JSON handler
// writes for the same record: times of every precision and zone, every level,
// strings that need escaping, durations in milliseconds.
func TestLineIsSlogsLine(t *testing.T) {
	t.Parallel()
	strs := []string{"", "request", "GET /v1/servers/{id}", `a"b\c`, "tab\there", "nl\n", "\x00\x1f\x7f", "é ü 日本",
		"\u2028\u2029", "<b>&amp;</b>", "bad \xff utf-8", "\xed\xa0\x80", "0f8fad5bd9cb469fa16570867728950e"}
	times := []time.Time{
		time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 22, 10, 0, 0, 400_000_000, time.UTC),
		time.Date(2026, 11, 22, 10, 0, 0, 123_456_789, time.FixedZone("CET", 3600)),
		time.Now(), // with a monotonic reading, which slog strips
	}
	durations := []int64{0, 1, 9, 10, 100, 420, 999, 1000, 1001, 1500, 2000, 12345, 1_000_000, 123_456_789, 999_999_999_999, 1 << 53, -1, -1500}
	levels := []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError, slog.LevelInfo + 2}
	n := 0
	for _, at := range times {
		for _, lv := range levels {
			for i, s := range strs {
				d := durations[(i+n)%len(durations)]
				n++
				var want bytes.Buffer
				h := slog.NewJSONHandler(&want, &slog.HandlerOptions{Level: slog.LevelDebug})
				rec := slog.NewRecord(at, lv, s, 0)
				rec.AddAttrs(slog.String("s", s), slog.Int("n", n), slog.Float64("duration_ms", float64(d)/1000))
				if err := h.Handle(context.Background(), rec); err != nil {
					t.Fatal(err)
				}

				var got bytes.Buffer
				w := asynclog.New(&got, time.Hour)
				lh := asynclog.JSONLogger(w).Handler().(asynclog.LineHandler)
				l := lh.Line(at, lv, s)
				l.B = append(l.B, `,"s":`...)
				l.B = asynclog.AppendString(l.B, s)
				l.B = append(l.B, `,"n":`...)
				l.B = strconv.AppendInt(l.B, int64(n), 10)
				l.B = append(l.B, `,"duration_ms":`...)
				l.B = asynclog.AppendMillis(l.B, d)
				l.End()
				_ = w.Close()
				if got.String() != want.String() {
					t.Errorf("line\n got %s want %s", got.String(), want.String())
				}
			}
		}
	}
}

// Only the logger's own handler writes lines by hand: one of With carries
// attributes a hand-built line would leave out.
func TestLineHandlerOnlyAtTheRoot(t *testing.T) {
	t.Parallel()
	w := asynclog.New(&bytes.Buffer{}, time.Hour)
	defer w.Close()
	log := asynclog.JSONLogger(w)
	if _, ok := log.Handler().(asynclog.LineHandler); !ok {
		t.Fatal("JSONLogger's handler is no LineHandler")
	}
	if _, ok := log.With("a", 1).Handler().(asynclog.LineHandler); ok {
		t.Error("With's handler is a LineHandler")
	}
	if _, ok := log.WithGroup("g").Handler().(asynclog.LineHandler); ok {
		t.Error("WithGroup's handler is a LineHandler")
	}
}

// A warning built by hand is out when End returns; an info line waits.
func TestLineUrgent(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	w := asynclog.New(&out, time.Hour)
	defer w.Close()
	lh := asynclog.JSONLogger(w).Handler().(asynclog.LineHandler)
	lh.Line(time.Now(), slog.LevelInfo, "routine").End()
	if out.Len() != 0 {
		t.Fatalf("an info line was written at once: %q", out.String())
	}
	lh.Line(time.Now(), slog.LevelWarn, "trouble").End()
	if got := out.String(); !bytes.Contains([]byte(got), []byte(`"msg":"routine"`)) || !bytes.Contains([]byte(got), []byte(`"msg":"trouble"`)) {
		t.Errorf("output %q, want both lines", got)
	}
}
