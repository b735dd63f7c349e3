package httpapi_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/berthhq/berth/internal/asynclog"
	"github.com/berthhq/berth/internal/testenv"
)

// discardWriter is an http.ResponseWriter that keeps nothing: a fresh header map per
// request, as net/http gives one.
type discardWriter struct {
	h      http.Header
	status int
}

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) WriteHeader(code int)        { d.status = code }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }

// BenchmarkGetServerHandler is GET /v1/servers/{id} in Berth's handler alone, with
// berthd's logger: no connection, no request parsing, no header writing. What Berth
// itself costs a request (authentication, the rate limit, the store, the JSON, the
// log line), apart from net/http's share, which BenchmarkGetServer includes.
func BenchmarkGetServerHandler(b *testing.B) {
	logw := asynclog.New(io.Discard, 0)
	defer logw.Close()
	env := testenv.New(b, testenv.Options{RateLimit: 1 << 30, Logger: asynclog.JSONLogger(logw)})
	a := env.NewAccount("en", "", "")
	srv := runningServer(b, a)
	h := env.Server.Config.Handler
	req := httptest.NewRequest("GET", fmt.Sprintf("/v1/servers/%d", int64(srv["id"].(float64))), nil)
	req.Header.Set("Authorization", "Bearer "+a.Token)
	req.Header.Set("Accept", "application/json")
	req.RemoteAddr = "127.0.0.1:40000"
	b.ReportAllocs()
	for b.Loop() {
		r := *req
		r.Header = req.Header.Clone()
		w := &discardWriter{h: http.Header{}}
		h.ServeHTTP(w, &r)
		if w.status != 200 {
			b.Fatalf("status %d", w.status)
		}
	}
}
