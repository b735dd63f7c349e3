package httpapi

import (
	"bytes"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/asynclog"
)

// berthd's logger gets the request line built by hand; any other logger through
// slog. Both lines are the same bytes, for every shape of request.
func TestRequestLineByHandIsSlogs(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 26, 2, 0, 0, 123_000_000, time.UTC)
	cases := []struct {
		method, pattern, id string
		status              int
		account             int64
		took                time.Duration
	}{
		{"GET", "GET /v1/servers/{id}", "0f8fad5bd9cb469fa16570867728950e", 200, 7, 420 * time.Microsecond},
		{"POST", "POST /v1/servers", `client"id\with!quotes~`, 201, 1 << 40, 1500 * time.Millisecond},
		{"BREW", "", "x", 0, 0, 0},
		{"DELETE", "/", "id-2", 404, 0, time.Millisecond},
		{"GET", "GET /v1/servers/{id}/metrics", "id-3", 500, 3, 123456789 * time.Microsecond},
	}
	for _, c := range cases {
		r := httptest.NewRequest(c.method, "/v1/servers/42", nil)
		r.Pattern = c.pattern
		w := &loggedWriter{status: c.status, account: c.account}

		var viaSlog bytes.Buffer
		(&Server{log: slog.New(slog.NewJSONHandler(&viaSlog, nil))}).writeRequestLine(w, r, c.id, start, start.Add(c.took))

		var byHand bytes.Buffer
		logw := asynclog.New(&byHand, time.Hour)
		(&Server{log: asynclog.JSONLogger(logw)}).writeRequestLine(w, r, c.id, start, start.Add(c.took))
		_ = logw.Close()

		if byHand.String() != viaSlog.String() || byHand.Len() == 0 {
			t.Errorf("%s %q:\n by hand %s via slog %s", c.method, c.pattern, byHand.String(), viaSlog.String())
		}
	}
}
