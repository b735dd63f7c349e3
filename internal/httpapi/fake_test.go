package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/apitest"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/httpapi"
	"github.com/berthhq/berth/internal/i18n"
	"github.com/berthhq/berth/internal/ops"
)

// The API's handlers on fakes of the core's services (httpapi.Services): what a
// handler decodes, which call it makes with what, and how it renders the answer, with
// no store, driver or job queue behind it.

const fakeToken = "berth_fake-token-of-the-handler-tests"

// fakeGate lets fakeToken in, as account 7 holding every scope; it runs every
// request once (no idempotency records) and audits nothing.
type fakeGate struct{}

func (fakeGate) Authenticate(_ context.Context, secret string) (hosting.Principal, error) {
	if secret != fakeToken {
		return hosting.Principal{}, hosting.Errorf(hosting.CodeUnauthenticated, "error.unauthenticated")
	}
	return hosting.Principal{Account: hosting.Account{ID: 7, Language: "en", Currency: "EUR"},
		Token: hosting.Token{ID: 1, AccountID: 7, Name: "fake", Scopes: hosting.AllScopes}}, nil
}

func (fakeGate) Idempotent(ctx context.Context, _ hosting.Principal, _ string, _ []byte, run func(ctx context.Context) ops.Response) (ops.Response, bool, error) {
	return run(ctx), false, nil
}

func (fakeGate) Audit(context.Context, hosting.AuditEntry) {}

func (fakeGate) NowFor(int64) time.Time { return fakeNow }

func (fakeGate) Now() time.Time { return fakeNow }

var fakeNow = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

// fakeKeys is an account's SSH keys in memory. It records each call the handlers make.
type fakeKeys struct {
	mu    sync.Mutex
	keys  []hosting.SSHKey
	next  int64
	calls []string
}

// called records a call: its words separated by spaces.
func (f *fakeKeys) called(words ...any) {
	f.calls = append(f.calls, strings.TrimSuffix(fmt.Sprintln(words...), "\n"))
}

func (f *fakeKeys) SSHKeys(_ context.Context, p hosting.Principal) ([]hosting.SSHKey, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.called("list", p.Account.ID)
	return append([]hosting.SSHKey(nil), f.keys...), nil
}

func (f *fakeKeys) CreateSSHKey(_ context.Context, p hosting.Principal, name, publicKey *string) (hosting.SSHKey, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.called("create", p.Account.ID, deref(name), deref(publicKey))
	if name == nil || publicKey == nil {
		var v hosting.Validation
		if name == nil {
			v.Add("name", "validation.required")
		}
		if publicKey == nil {
			v.Add("public_key", "validation.required")
		}
		return hosting.SSHKey{}, v.Err("name", "public_key")
	}
	f.next++
	k := hosting.SSHKey{ID: f.next, AccountID: p.Account.ID, Name: *name, PublicKey: *publicKey,
		Fingerprint: "SHA256:fake" + strings.Repeat("A", 39), CreatedAt: fakeNow}
	f.keys = append(f.keys, k)
	return k, nil
}

func (f *fakeKeys) DeleteSSHKey(_ context.Context, p hosting.Principal, id int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.called("delete", p.Account.ID, id)
	for i, k := range f.keys {
		if k.ID == id {
			f.keys = append(f.keys[:i], f.keys[i+1:]...)
			return nil
		}
	}
	return hosting.ErrNotFound()
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// TestHandlersOnFakeSSHKeys: the SSH key routes decode their request, call the
// service once with what the request said (the principal's account, the name and
// key as sent, the id of the path), and render its answers as the OpenAPI document
// describes them (checked), its errors with their statuses: a handler that passes
// the wrong field, renders the wrong status or skips the call fails here.
func TestHandlersOnFakeSSHKeys(t *testing.T) {
	t.Parallel()
	keys := &fakeKeys{}
	srv, err := httpapi.New(ops.Services{Gate: fakeGate{}, SSHKeys: keys}, i18n.MustLoad(), slog.New(slog.DiscardHandler), httpapi.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	client := &http.Client{Transport: apitest.New(t).Transport(t, nil)}
	do := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		var rd io.Reader
		if body != "" {
			rd = bytes.NewReader([]byte(body))
		}
		req, _ := http.NewRequest(method, ts.URL+"/v1"+path, rd)
		req.Header.Set("Authorization", "Bearer "+fakeToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		raw, _ := io.ReadAll(resp.Body)
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatalf("%s %s: %d %q is not JSON", method, path, resp.StatusCode, raw)
			}
		}
		return resp.StatusCode, m
	}
	const pub = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeFakeFakeFakeFakeFakeFakeFakeFakeFakeFake laptop"

	code, m := do("POST", "/ssh-keys", `{"name": "laptop", "public_key": "`+pub+`"}`)
	data, _ := m["data"].(map[string]any)
	if code != http.StatusCreated || data["id"] != float64(1) || data["name"] != "laptop" || data["public_key"] != pub ||
		data["created_at"] != "2026-11-27T10:00:00Z" {
		t.Errorf("create: %d %v", code, m)
	}
	code, m = do("POST", "/ssh-keys", `{"name": "laptop"}`)
	if errs, _ := m["errors"].(map[string]any); code != http.StatusUnprocessableEntity || errs["public_key"] == nil {
		t.Errorf("create without a key: %d %v", code, m)
	}
	code, m = do("POST", "/ssh-keys", `{"name": "laptop", "public_key": "`+pub+`", "comment": "x"}`)
	if errs, _ := m["errors"].(map[string]any); code != http.StatusUnprocessableEntity || errs["comment"] == nil {
		t.Errorf("create with a field the route does not take: %d %v", code, m)
	}
	code, m = do("GET", "/ssh-keys", "")
	if list, _ := m["data"].([]any); code != http.StatusOK || len(list) != 1 {
		t.Errorf("list: %d %v", code, m)
	}
	if code, m = do("DELETE", "/ssh-keys/1", ""); code != http.StatusNoContent {
		t.Errorf("delete: %d %v", code, m)
	}
	if code, m = do("DELETE", "/ssh-keys/1", ""); code != http.StatusNotFound || m["code"] != "not_found" {
		t.Errorf("delete again: %d %v", code, m)
	}
	if code, m = do("DELETE", "/ssh-keys/abc", ""); code != http.StatusNotFound {
		t.Errorf("delete of a path that is no id: %d %v", code, m)
	}

	// What the service was asked, in order: the invalid create and the path that is
	// no id never reach it (the handler refuses them itself), the missing key does.
	want := []string{
		"create 7 laptop " + pub,
		"create 7 laptop <nil>",
		"list 7",
		"delete 7 1",
		"delete 7 1",
	}
	keys.mu.Lock()
	defer keys.mu.Unlock()
	if strings.Join(keys.calls, "\n") != strings.Join(want, "\n") {
		t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(keys.calls, "\n"), strings.Join(want, "\n"))
	}
}
