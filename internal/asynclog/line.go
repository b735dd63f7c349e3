package asynclog

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// JSONLogger is berthd's logger: slog's JSON lines (default options) through w, the
// warnings and errors flushed at once (Urgent). Its handler, and only its own (not one
// of With or WithGroup), is a LineHandler.
func JSONLogger(w *Writer) *slog.Logger {
	return slog.New(&jsonRoot{urgent: urgent{Handler: slog.NewJSONHandler(w, nil), w: w, min: slog.LevelWarn}})
}

// LineHandler writes one kind of line that comes very often (the request log)
// without slog's generic record path: Line starts it as slog's JSON handler starts
// every line (time, level, msg), the caller appends its attributes to Line.B, each
// as `,"key":value`, and End writes it. The line is byte for byte what the same
// record through slog would be, if the caller appends as slog does (AppendString,
// strconv.AppendInt, AppendMillis for durations).
type LineHandler interface {
	Line(t time.Time, level slog.Level, msg string) *Line
}

// Line is a log line being built; see LineHandler.
type Line struct {
	B     []byte
	h     *jsonRoot
	level slog.Level
}

var linePool = sync.Pool{New: func() any { return &Line{B: make([]byte, 0, 512)} }}

type jsonRoot struct{ urgent }

// Line implements LineHandler.
func (h *jsonRoot) Line(t time.Time, level slog.Level, msg string) *Line {
	l := linePool.Get().(*Line)
	l.h, l.level = h, level
	b := append(l.B[:0], `{"time":"`...)
	b = t.Round(0).AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"`...)
	b = append(b, level.String()...)
	b = append(b, `","msg":`...)
	l.B = AppendString(b, msg)
	return l
}

// End writes the line (and flushes it at once if its level is urgent); l must not be
// used after.
func (l *Line) End() {
	l.B = append(l.B, '}', '\n')
	_, _ = l.h.w.Write(l.B)
	if l.level >= l.h.min {
		_ = l.h.w.Flush()
	}
	if cap(l.B) <= 4<<10 {
		l.h = nil
		linePool.Put(l)
	}
}

// AppendString appends s as a JSON string, escaped as slog's JSON handler escapes it.
func AppendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' {
			return appendStringSlow(b, s)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendStringSlow is AppendString for a string that needs escaping: slog's own
// escaping, through a one-attribute record (rare on the paths that use Line).
func appendStringSlow(b []byte, s string) []byte {
	buf := slowBufs.Get().(*slowBuf)
	defer slowBufs.Put(buf)
	buf.b = buf.b[:0]
	var r slog.Record // no time, level or message: the handler writes only the attribute
	r.AddAttrs(slog.String("k", s))
	_ = buf.h.Handle(context.Background(), r)
	// buf.b is {"k":"...escaped..."}\n
	v := buf.b[len(`{"k":`) : len(buf.b)-2]
	return append(b, v...)
}

type slowBuf struct {
	b []byte
	h slog.Handler
}

func (s *slowBuf) Write(p []byte) (int, error) { s.b = append(s.b, p...); return len(p), nil }

var slowBufs = sync.Pool{New: func() any {
	s := &slowBuf{}
	// A record without time, level or message: only the attribute is written.
	s.h = slog.NewJSONHandler(s, &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && (a.Key == slog.TimeKey || a.Key == slog.LevelKey || a.Key == slog.MessageKey) {
			return slog.Attr{}
		}
		return a
	}})
	return s
}}

// AppendMillis appends a duration in whole microseconds as a number of milliseconds,
// as slog's JSON handler writes slog.Float64(key, float64(us)/1000) (encoding/json's
// shortest form): 420 µs is 0.42, 1500 µs 1.5, 2000 µs 2.
func AppendMillis(b []byte, us int64) []byte {
	if us < 0 || us >= 1e15 {
		// Outside what a request takes; encoding/json writes it as it likes.
		out, _ := json.Marshal(float64(us) / 1000)
		return append(b, out...)
	}
	b = strconv.AppendInt(b, us/1000, 10)
	frac := us % 1000
	if frac == 0 {
		return b
	}
	digits := [3]byte{byte('0' + frac/100), byte('0' + frac/10%10), byte('0' + frac%10)}
	n := 3
	for digits[n-1] == '0' {
		n--
	}
	b = append(b, '.')
	return append(b, digits[:n]...)
}
