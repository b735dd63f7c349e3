package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/asynclog"
)

// BenchmarkLogRequest is what the log line of a request costs the request, with
// berthd's logger (JSON through asynclog, to io.Discard here).
func BenchmarkLogRequest(b *testing.B) {
	logw := asynclog.New(io.Discard, 0)
	defer logw.Close()
	s := &Server{log: asynclog.JSONLogger(logw)}
	r := httptest.NewRequest("GET", "/v1/servers/42", nil)
	r.Pattern = "GET /v1/servers/{id}"
	w := &loggedWriter{ResponseWriter: httptest.NewRecorder(), status: http.StatusOK, account: 7}
	id := newRequestID()
	start := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		s.logRequest(w, r, id, start)
	}
}
