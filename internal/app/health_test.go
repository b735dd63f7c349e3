package app_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/internal/app"
)

// probe asks the web handler path with method and decodes its JSON answer.
func probe(t *testing.T, h http.Handler, method, path string) (int, map[string]string, http.Header) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	var body map[string]string
	if method != http.MethodHead {
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("%s %s: %d %q is not JSON: %v", method, path, rec.Code, rec.Body, err)
		}
	}
	return rec.Code, body, rec.Header()
}

func openApp(t *testing.T) *app.App {
	t.Helper()
	a, err := app.Open(context.Background(), app.Config{DataDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestProbes: /healthz and /readyz answer without a token on the web handler (the
// API port); /readyz is 503, with its reason, when the schema is behind this build's
// and when the database does not answer, while /healthz stays 200.
func TestProbes(t *testing.T) {
	t.Parallel()
	a := openApp(t)
	h, err := a.WebHandler()
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		code, body, hd := probe(t, h, "GET", path)
		if code != 200 || body["status"] != "ok" || hd.Get("Content-Type") != "application/json" || hd.Get("Cache-Control") != "no-store" {
			t.Errorf("GET %s: %d %v %v", path, code, body, hd)
		}
		if code, _, _ := probe(t, h, "HEAD", path); code != 200 {
			t.Errorf("HEAD %s: %d", path, code)
		}
		if code, _, hd := probe(t, h, "POST", path); code != http.StatusMethodNotAllowed || hd.Get("Allow") != "GET, HEAD" {
			t.Errorf("POST %s: %d Allow %q", path, code, hd.Get("Allow"))
		}
	}

	// The newest migration is not recorded: an older schema than this build needs.
	if _, err := a.DB.WriteDB().Exec(`DELETE FROM goose_db_version WHERE version_id = (SELECT MAX(version_id) FROM goose_db_version)`); err != nil {
		t.Fatal(err)
	}
	code, body, hd := probe(t, h, "GET", "/readyz")
	if code != http.StatusServiceUnavailable || body["status"] != "unavailable" || body["reason"] != "database schema not migrated" ||
		hd.Get("Retry-After") == "" {
		t.Errorf("GET /readyz, schema behind: %d %v", code, body)
	}
	if code, _, _ := probe(t, h, "GET", "/healthz"); code != 200 {
		t.Errorf("GET /healthz, schema behind: %d, want 200 (alive all the same)", code)
	}

	// The database is gone.
	if err := a.DB.Close(); err != nil {
		t.Fatal(err)
	}
	code, body, _ = probe(t, h, "GET", "/readyz")
	if code != http.StatusServiceUnavailable || body["reason"] != "database unreachable" {
		t.Errorf("GET /readyz, database closed: %d %v", code, body)
	}
	if code, _, _ := probe(t, h, "GET", "/healthz"); code != 200 {
		t.Errorf("GET /healthz, database closed: %d, want 200", code)
	}
}

// TestProbesDocumented: the API's contract describes the probes (they are outside
// /v1, so in its description rather than under paths).
func TestProbesDocumented(t *testing.T) {
	t.Parallel()
	doc := string(api.OpenAPIYAML)
	for _, want := range []string{"`GET /healthz`", "`GET /readyz`", "database unreachable", "database schema not migrated"} {
		if !strings.Contains(doc, want) {
			t.Errorf("api/openapi.yaml does not mention %s", want)
		}
	}
}
