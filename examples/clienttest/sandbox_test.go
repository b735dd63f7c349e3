package clienttest

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The Berth these tests run against: `berthd serve --sandbox --seed ../fixtures.yaml`
// on a fresh data directory, started by TestMain. The token is one of the fixtures
// file's fixed tokens: a client's CI can write it down as this test does.
const (
	fixtures = "../fixtures.yaml"
	token    = "berth_sandbox_example-ci-token-0123456789abcdef"
)

var (
	// berthURL is the address of the Berth TestMain started, without /v1.
	berthURL string
	// berthdBin is the berthd TestMain built.
	berthdBin string
)

// TestMain builds berthd, serves the sandbox on a free port of the loopback, waits
// until it is ready, runs the tests and stops it (also when tests fail).
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("examples/clienttest: skipped in -short mode (it builds and runs berthd)")
		os.Exit(0)
	}
	os.Exit(runWithBerth(m))
}

func runWithBerth(m *testing.M) int {
	dir, err := os.MkdirTemp("", "berth-clienttest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := checkFixtures(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// A client's own CI would `go install github.com/berthhq/berth/cmd/berthd@VERSION`
	// instead; here the berthd of this checkout is tested.
	bin := filepath.Join(dir, "berthd")
	berthdBin = bin
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/berthhq/berth/cmd/berthd").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build berthd: %v\n%s", err, out)
		return 1
	}
	addr, err := freeAddr()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var log bytes.Buffer
	// --sim-time-scale 0.02: a provisioning takes 0.6 s instead of 30.
	cmd := exec.Command(bin, "serve", "--sandbox", "--seed", fixtures, "--data", filepath.Join(dir, "data"),
		"--addr", addr, "--sim-time-scale", "0.02")
	cmd.Stdout, cmd.Stderr = &log, &log
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	berthURL = "http://" + addr
	if err := waitReady(berthURL+"/readyz", time.Minute); err != nil {
		fmt.Fprintf(os.Stderr, "berthd did not get ready: %v\n%s", err, log.String())
		return 1
	}
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "berthd's log:\n%s", log.String())
	}
	return code
}

// checkFixtures makes sure the fixtures file still holds the token the tests use.
func checkFixtures() error {
	raw, err := os.ReadFile(fixtures)
	if err != nil {
		return err
	}
	if !strings.Contains(string(raw), token) {
		return fmt.Errorf("%s has no token %s: the tests and the fixtures disagree", fixtures, token)
	}
	return nil
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// waitReady waits until url answers 200.
func waitReady(url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("%s: %s", url, resp.Status)
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ---- the sandbox API ----

// sandbox calls the sandbox API (/sandbox/v1) for a test.
type sandbox struct {
	t     *testing.T
	base  string
	token string
	since int64 // the journal's newest entry when the test began
}

// startTest starts a test from a clean account: a sandbox reset empties it
// (servers, SSH keys, projects, ledger, faults, its test clock) and sets its credit;
// its token stays. When the test fails, the account's request journal, what the
// client sent and got, is printed with the test's log.
func startTest(t *testing.T) (*Client, *sandbox) {
	t.Helper()
	sb := &sandbox{t: t, base: berthURL + "/sandbox/v1", token: token}
	sb.call("POST", "/reset", map[string]any{"credit": "100.00"}, nil)
	if last := sb.requests(1); len(last) > 0 { // the journal outlives a reset
		sb.since = last[0].ID
	}
	t.Cleanup(func() {
		if t.Failed() {
			var b strings.Builder
			writeJournal(&b, sb.requests(50))
			t.Logf("the last requests of the client, newest first:\n%s", b.String())
		}
	})
	return &Client{BaseURL: berthURL + "/v1", Token: token}, sb
}

// call sends a request to the sandbox API; anything but a 2xx fails the test.
func (s *sandbox) call(method, path string, body, out any) {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			s.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.base+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s /sandbox/v1%s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		s.t.Fatalf("%s /sandbox/v1%s: %s %s", method, path, resp.Status, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, &struct {
			Data any `json:"data"`
		}{out}); err != nil {
			s.t.Fatalf("%s /sandbox/v1%s: %v in %s", method, path, err, data)
		}
	}
}

// fault adds a fault (POST /sandbox/v1/faults).
func (s *sandbox) fault(spec map[string]any) {
	s.t.Helper()
	s.call("POST", "/faults", spec, nil)
}

// now is the account's test clock.
func (s *sandbox) now() time.Time {
	s.t.Helper()
	var clock struct {
		Now time.Time `json:"now"`
	}
	s.call("GET", "/clock", nil, &clock)
	return clock.Now
}

// advance moves the account's test clock forward by d (a Go duration, e.g. "720h"):
// the answer comes once what that time does to the account is done.
func (s *sandbox) advance(d string) {
	s.t.Helper()
	s.call("POST", "/clock", map[string]string{"advance": d}, nil)
}

// journalEntry is a request the client sent, as the sandbox's journal keeps it.
type journalEntry struct {
	ID             int64           `json:"id"`
	Time           time.Time       `json:"time"`
	Method         string          `json:"method"`
	Path           string          `json:"path"`
	Query          *string         `json:"query"`
	Status         int             `json:"status"`
	RequestID      *string         `json:"request_id"`
	IdempotencyKey *string         `json:"idempotency_key"`
	RequestBody    json.RawMessage `json:"request_body"`
	ResponseBody   json.RawMessage `json:"response_body"`
}

// requests is the test's latest n requests to /v1, newest first.
func (s *sandbox) requests(n int) []journalEntry {
	s.t.Helper()
	var all []journalEntry
	s.call("GET", fmt.Sprintf("/requests?limit=%d", n), nil, &all)
	var out []journalEntry
	for _, e := range all {
		if e.ID > s.since {
			out = append(out, e)
		}
	}
	return out
}

// writeJournal writes one line per request: when, what, the answer's status, the
// request id to find it in berthd's log, and the bodies.
func writeJournal(w io.Writer, entries []journalEntry) {
	for _, e := range entries {
		target := e.Path
		if e.Query != nil {
			target += "?" + *e.Query
		}
		id := ""
		if e.RequestID != nil {
			id = *e.RequestID
		}
		fmt.Fprintf(w, "%s %s %s → %d (request %s)\n", e.Time.Format("15:04:05.000"), e.Method, target, e.Status, id)
		if e.RequestBody != nil && string(e.RequestBody) != "null" {
			fmt.Fprintf(w, "    sent %s\n", e.RequestBody)
		}
		fmt.Fprintf(w, "    got  %s\n", e.ResponseBody)
	}
}

// TestJournalShowsWhatTheClientSent: what a failing test prints (startTest's
// cleanup) names each request, its answer's status and request id, and the bodies.
func TestJournalShowsWhatTheClientSent(t *testing.T) {
	c, sb := startTest(t)
	if err := c.Do(testContext(t), "POST", "/projects", map[string]string{"name": "journal"}, nil); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	writeJournal(&b, sb.requests(1))
	for _, want := range []string{"POST /v1/projects → 201 (request ", `sent {"name":"journal"}`, `got  {"data":{`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the journal's lines lack %q:\n%s", want, b.String())
		}
	}
}

// testContext is a context for one test, with room for a loaded machine.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// order is an order of the default catalog's smallest server: plan 1 (s1-1c-1g,
// 4.51 EUR a month) in location 1 with image 1.
func order(name string) map[string]any {
	return map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1, "display_name": name}
}
