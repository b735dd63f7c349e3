package httpapi

import (
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/berthhq/berth/internal/asynclog"
)

// The request log (issue 16): one line per request at level Info, when the Server's
// logger takes Info lines, naming the request id (requestid.go), the route pattern
// that matched ("GET /v1/servers/{id}"; "unmatched" for none), the method, the
// status, the duration in milliseconds and, once the token is known, the account.
// Nothing else of the request: never a token, a header, the path or query (a path
// no route has could hold anything), or a body.
//
// berthd's logger (asynclog.JSONLogger) takes the line built by hand into a pooled
// buffer, without slog's record path and the encoding/json call slog makes for a
// float; any other logger gets the same line through slog. Either way the request
// never waits on stderr: asynclog writes it from a goroutine of its own.

// loggedWriter remembers what the log line of a request needs from its answer.
type loggedWriter struct {
	http.ResponseWriter
	status int
	// account is the account that made the request, once authenticated (0: none).
	account int64
}

func (w *loggedWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *loggedWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *loggedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// noteAccount tells the log line of the request answered through w the account that
// made it, through any writer that wraps the loggedWriter and unwraps to it.
func noteAccount(w http.ResponseWriter, account int64) {
	for {
		switch x := w.(type) {
		case *loggedWriter:
			x.account = account
			return
		case interface{ Unwrap() http.ResponseWriter }:
			w = x.Unwrap()
		default:
			return
		}
	}
}

// logRequest writes the log line of r, answered through w since start.
func (s *Server) logRequest(w *loggedWriter, r *http.Request, id string, start time.Time) {
	s.writeRequestLine(w, r, id, start, time.Now())
}

// writeRequestLine writes the line of a request that ended at end. With berthd's
// logger (asynclog.JSONLogger) it builds the line by hand, a few hundred ns less
// than slog's record path on every request; the line is the same either way.
func (s *Server) writeRequestLine(w *loggedWriter, r *http.Request, id string, start, end time.Time) {
	route := r.Pattern
	if route == "" || route == "/" { // the catch-all answers only unknown paths
		route = "unmatched"
	}
	status := w.status
	if status == 0 {
		status = http.StatusOK
	}
	us := end.Sub(start).Microseconds()
	if lh, ok := s.log.Handler().(asynclog.LineHandler); ok {
		l := lh.Line(end, slog.LevelInfo, "request")
		b := append(l.B, `,"request_id":`...)
		b = asynclog.AppendString(b, id)
		b = append(b, `,"route":`...)
		b = asynclog.AppendString(b, route)
		b = append(b, `,"method":`...)
		b = asynclog.AppendString(b, logMethod(r.Method))
		b = append(b, `,"status":`...)
		b = strconv.AppendInt(b, int64(status), 10)
		b = append(b, `,"duration_ms":`...)
		b = asynclog.AppendMillis(b, us)
		if w.account != 0 {
			b = append(b, `,"account_id":`...)
			b = strconv.AppendInt(b, w.account, 10)
		}
		l.B = b
		l.End()
		return
	}
	rec := slog.NewRecord(end, slog.LevelInfo, "request", 0)
	rec.AddAttrs(
		slog.String("request_id", id),
		slog.String("route", route),
		slog.String("method", logMethod(r.Method)),
		slog.Int("status", status),
		slog.Float64("duration_ms", float64(us)/1000),
	)
	if w.account != 0 {
		rec.AddAttrs(slog.Int64("account_id", w.account))
	}
	_ = s.log.Handler().Handle(r.Context(), rec)
}

// logMethod is the method of a request as the log names it: a method no route
// takes, which the client may have made up at any length, is "other".
func logMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return m
	}
	return "other"
}
