package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/testlog"
	"github.com/berthhq/berth/internal/testnet"
)

// The README's walk-through with curl lies between these markers (its shell blocks,
// run as one script).
const (
	curlWalkStart = "<!-- walkthrough:curl -->"
	curlWalkEnd   = "<!-- /walkthrough:curl -->"
	curlWalkURL   = "http://127.0.0.1:8080/v1"
	// The walk-throughs' berthd answers DNS at the --dns-addr of readmeServe, which
	// their dig lines (readmeDig) ask.
	readmeServe = "go run ./cmd/berthd serve --demo --sandbox --dns-addr 127.0.0.1:8053\n"
	readmeDig   = "dig @127.0.0.1 -p 8053 "
)

// digAt is script with its dig lines asking the nameserver at dnsAddr (host:port)
// instead of the README's, once the README is seen to start berthd with the
// --dns-addr they ask and script to have n of them.
func digAt(t *testing.T, script, dnsAddr string, n int) string {
	t.Helper()
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "```sh\n"+readmeServe+"```") {
		t.Fatalf("README.md no longer starts the walk-throughs' berthd with %q: update this test", readmeServe)
	}
	if got := strings.Count(script, readmeDig); got != n {
		t.Fatalf("the walk-through has %d lines %q, this test expects %d: update it\n%s", got, readmeDig, n, script)
	}
	host, port, err := net.SplitHostPort(dnsAddr)
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(script, readmeDig, "dig @"+host+" -p "+port+" ")
}

// slowShutdown has the curl walk-through's one shutdown take ten times its time, by a
// sandbox operation fault added after the walk-through's reset. At the tests'
// --sim-time-scale 0.2 a shutdown takes a second, the window in which the README's
// DELETE is to answer 409 busy; on a loaded machine CI's DELETE came after it (the
// power POST, a jq and a curl took 2.3 s), deleted the server, and the walk-through
// failed further on. The README itself runs at scale 1: a 5-second window.
func slowShutdown(t *testing.T, script string) string {
	t.Helper()
	const reset = "-X POST $SANDBOX/reset "
	if strings.Count(script, reset) != 1 {
		t.Fatalf("the curl walk-through no longer resets the sandbox once (%q): update this test", reset)
	}
	i := strings.Index(script, reset)
	end := i + strings.Index(script[i:], "\n") + 1
	return script[:end] + `curl "${h[@]}" -X POST $SANDBOX/faults -d '{"operation": "power", "slow": 10}' >/dev/null` + "\n" + script[end:]
}

// readmeShell returns the shell blocks of README.md between the markers start and
// end, joined into one script.
func readmeShell(t *testing.T, start, end string) string {
	t.Helper()
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	i, j := strings.Index(text, start), strings.Index(text, end)
	if i < 0 || j < i {
		t.Fatalf("README.md has no %s ... %s", start, end)
	}
	var blocks []string
	for rest := text[i:j]; ; {
		k := strings.Index(rest, "```sh\n")
		if k < 0 {
			break
		}
		rest = rest[k+len("```sh\n"):]
		k = strings.Index(rest, "```")
		if k < 0 {
			t.Fatalf("an unterminated shell block between %s and %s", start, end)
		}
		blocks = append(blocks, rest[:k])
		rest = rest[k+3:]
	}
	if len(blocks) == 0 {
		t.Fatalf("no shell block between %s and %s", start, end)
	}
	return strings.Join(blocks, "\n")
}

// TestREADMECurlWalkthrough runs the README's walk-through with curl, as written,
// twice in a row against one real `berthd serve --demo --sandbox --dns-addr` (the
// walk-through begins with a sandbox reset, so the second run must work as the first
// did; its dig lines ask that berthd, each failing when the answer is not the one it
// expects). The
// directory it runs in holds data/ (the demo token, as serve --demo leaves it), HOME
// a fresh ~/.ssh/id_ed25519.pub. The script stops at the first failing command
// (bash -e, pipefail: a jq that finds no JSON, a metrics wait that never sees a
// point); what each run sent and got is then read from the sandbox's request journal
// and checked against what the README says each step answers.
func TestREADMECurlWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	for _, tool := range []string{"bash", "curl", "jq", "od"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("*** SKIPPED: the README's curl walk-through needs %s on PATH (Debian: apt-get install curl jq) ***", tool)
		}
	}
	testenv.Dig(t)
	t.Parallel()
	script := readmeShell(t, curlWalkStart, curlWalkEnd)
	if !strings.Contains(script, curlWalkURL) {
		t.Fatalf("the walk-through no longer names %s: update this test", curlWalkURL)
	}
	bin := testenv.BerthdBinary(t)
	work, home := t.TempDir(), t.TempDir()
	data := filepath.Join(work, "data")
	addr, dnsAddr := testnet.FreeAddr(t), testnet.FreeDNSAddr(t)
	script = slowShutdown(t, digAt(t, script, dnsAddr, 3))
	// Scale 0.2: provisioning 6 s, a shutdown 1 s (10 s by slowShutdown: the window of
	// the walk-through's 409), the first metrics point a few seconds after running.
	d := &daemon{base: "http://" + addr + "/v1", log: &testlog.Buffer{}}
	d.cmd = exec.Command(bin, "serve", "--demo", "--sandbox", "--data", data, "--addr", addr, "--sim-time-scale", "0.2",
		"--dns-addr", dnsAddr)
	d.cmd.Stdout, d.cmd.Stderr = d.log, d.log
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.cmd.Process.Kill(); _ = d.cmd.Wait() })
	d.waitUp(t)
	raw, err := os.ReadFile(filepath.Join(data, "demo-token"))
	if err != nil {
		t.Fatalf("serve --demo left no data/demo-token: %v\n%s", err, d.log)
	}
	token := strings.TrimSpace(string(raw))

	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519.pub"), []byte(testenv.PublicKey(t)+" walkthrough@berth"+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	script = strings.ReplaceAll(script, curlWalkURL, d.base)

	var last int64 // the newest journal entry of the runs before (ids only grow)
	for run := 1; run <= 2; run++ {
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-x", "-c", script)
		cmd.Dir = work
		cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "LANG=C"}
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("run %d of the README's curl walk-through failed: %v\n%s\nberthd:\n%s", run, err, out, d.log)
		}
		var mine []journalEntry // newest first
		for _, e := range journal(t, d, token) {
			if e.ID > last {
				mine = append(mine, e)
			}
		}
		if len(mine) > 0 {
			last = mine[0].ID
		}
		for _, p := range checkCurlWalk(mine) {
			t.Errorf("run %d: %s", run, p)
		}
		if t.Failed() {
			t.Fatalf("run %d's output:\n%s", run, out)
		}
	}
	if code, m := d.call(t, token, "GET", "/servers", nil); code != 200 || len(m["data"].([]any)) != 0 {
		t.Errorf("servers left after the walk-through: %d %v", code, m)
	}
}

// journalEntry is an entry of GET /sandbox/v1/requests.
type journalEntry struct {
	ID             int64           `json:"id"`
	Method         string          `json:"method"`
	Path           string          `json:"path"`
	Query          *string         `json:"query"`
	Status         int             `json:"status"`
	IdempotencyKey *string         `json:"idempotency_key"`
	ResponseBody   json.RawMessage `json:"response_body"`
}

// journal reads the account's whole request journal, newest first.
func journal(t *testing.T, d *daemon, token string) []journalEntry {
	t.Helper()
	req, _ := http.NewRequest("GET", strings.TrimSuffix(d.base, "/v1")+"/sandbox/v1/requests?limit=1000", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page struct{ Data []journalEntry }
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /sandbox/v1/requests: %d, %v", resp.StatusCode, err)
	}
	return page.Data
}

// checkCurlWalk checks one run of the walk-through, its requests newest first,
// against what the README says they answer.
func checkCurlWalk(newestFirst []journalEntry) []string {
	var problems []string
	var orders, busy, metrics, deleted, volumes, domains, tickets []journalEntry
	for i := len(newestFirst) - 1; i >= 0; i-- {
		e := newestFirst[i]
		route := e.Method + " " + e.Path
		switch {
		case route == "POST /v1/servers":
			orders = append(orders, e)
		case e.Method == "DELETE" && strings.HasPrefix(e.Path, "/v1/servers/") && e.Status == 409:
			busy = append(busy, e)
			continue
		case e.Method == "DELETE" && strings.HasPrefix(e.Path, "/v1/servers/"):
			deleted = append(deleted, e)
		case e.Method == "GET" && strings.HasSuffix(e.Path, "/metrics"):
			metrics = append(metrics, e)
		case route == "POST /v1/volumes" || route == "DELETE /v1/volumes/data":
			volumes = append(volumes, e)
		case strings.HasPrefix(e.Path, "/v1/tickets") || strings.HasPrefix(e.Path, "/v1/attachments"):
			tickets = append(tickets, e)
		case strings.HasPrefix(e.Path, "/v1/domains") && e.Method != "GET",
			e.Method == "PUT" && strings.HasSuffix(e.Path, "/rdns"):
			domains = append(domains, e)
		}
		if e.Status >= 300 {
			problems = append(problems, fmt.Sprintf("%s answered %d: %s", route, e.Status, e.ResponseBody))
		}
	}
	if len(newestFirst) == 0 {
		return []string{"the journal holds no request of the run"}
	}
	// The order, then the same order again with the same Idempotency-Key: one server.
	if len(orders) != 2 || orders[0].IdempotencyKey == nil || orders[1].IdempotencyKey == nil ||
		*orders[0].IdempotencyKey != *orders[1].IdempotencyKey || orders[0].Status != 201 {
		problems = append(problems, fmt.Sprintf("want one order sent twice with one Idempotency-Key, got %d: %+v", len(orders), orders))
	} else if a, b := dataField(orders[0].ResponseBody, "id"), dataField(orders[1].ResponseBody, "id"); a == nil || a != b {
		problems = append(problems, fmt.Sprintf("the repeated order answered server %v, the first %v", b, a))
	}
	// The delete during the shutdown: 409 busy, naming the power operation.
	if len(busy) != 1 {
		problems = append(problems, fmt.Sprintf("want one 409 for the delete during the shutdown, got %d", len(busy)))
	} else {
		var body struct {
			Code      string
			Operation struct{ Type string }
		}
		if json.Unmarshal(busy[0].ResponseBody, &body) != nil || body.Code != "busy" || body.Operation.Type != "power" {
			problems = append(problems, fmt.Sprintf("the delete during the shutdown answered %s, want busy naming the power operation", busy[0].ResponseBody))
		}
	}
	// The last metrics answer has points.
	if len(metrics) == 0 {
		problems = append(problems, "no metrics request")
	} else {
		var m struct{ Data struct{ CPU []any } }
		if last := metrics[len(metrics)-1]; json.Unmarshal(last.ResponseBody, &m) != nil || len(m.Data.CPU) == 0 {
			problems = append(problems, fmt.Sprintf("the metrics step showed no point: %s", last.ResponseBody))
		}
	}
	// The volume made on the server, then deleted once detached.
	if len(volumes) != 2 || volumes[0].Status != 201 || volumes[1].Status != 204 {
		problems = append(problems, fmt.Sprintf("want the volume made (201) and deleted (204), got %+v", volumes))
	}
	// The zone made, its two RRsets made, the PTR set, the zone deleted.
	var got []string
	for _, e := range domains {
		got = append(got, fmt.Sprintf("%s %s %d", e.Method, strings.TrimPrefix(e.Path, "/v1"), e.Status))
	}
	if want := "POST /domains 201, PUT /domains/example.com/rrsets/www/A 201, PUT /domains/example.com/rrsets/@/MX 201, " +
		"PUT /servers/_/rdns 200, DELETE /domains/example.com 204"; strings.Join(serverIDs(got), ", ") != want {
		problems = append(problems, fmt.Sprintf("the DNS steps sent %q, want %q", got, want))
	}
	// The ticket: the file uploaded, the ticket opened with it, listed answered after
	// the sandbox's staff reply, written to, read with its thread, the file
	// downloaded, closed.
	got = nil
	for _, e := range tickets {
		got = append(got, fmt.Sprintf("%s %s %d", e.Method, ticketIDPath.ReplaceAllString(strings.TrimPrefix(e.Path, "/v1"), "/$1/_"), e.Status))
	}
	if want := "POST /attachments 201, POST /tickets 201, GET /tickets 200, POST /tickets/_/messages 201, GET /tickets/_ 200, " +
		"GET /attachments/_ 200, POST /tickets/_/close 200"; strings.Join(got, ", ") != want {
		problems = append(problems, fmt.Sprintf("the ticket steps sent %q, want %q", got, want))
	} else {
		var list struct{ Data []struct{ Status string } }
		if json.Unmarshal(tickets[2].ResponseBody, &list) != nil || len(list.Data) != 1 || list.Data[0].Status != "answered" {
			problems = append(problems, fmt.Sprintf("the tickets listed after the staff reply: %s, want one answered", tickets[2].ResponseBody))
		}
		var thread struct {
			Data struct {
				Messages []struct {
					Author     string
					AuthorName string `json:"author_name"`
				}
			}
		}
		if json.Unmarshal(tickets[4].ResponseBody, &thread) != nil || len(thread.Data.Messages) != 3 ||
			thread.Data.Messages[1].Author != "staff" || thread.Data.Messages[1].AuthorName != "Ada" {
			problems = append(problems, fmt.Sprintf("the ticket's thread: %s, want the customer's, Ada's, the customer's", tickets[4].ResponseBody))
		}
		if dataField(tickets[6].ResponseBody, "status") != "closed" {
			problems = append(problems, fmt.Sprintf("the ticket closed: %s", tickets[6].ResponseBody))
		}
	}
	if len(deleted) != 1 || deleted[0].Status != 204 {
		problems = append(problems, fmt.Sprintf("want the server deleted once (204), got %+v", deleted))
	}
	return problems
}

// serverIDs is calls with the server's id in their paths as _.
func serverIDs(calls []string) []string {
	out := make([]string, len(calls))
	for i, c := range calls {
		out[i] = serverIDPath.ReplaceAllString(c, "/servers/_/")
	}
	return out
}

var serverIDPath = regexp.MustCompile(`/servers/[0-9]+/`)

// ticketIDPath matches the id in a ticket's or a file's path.
var ticketIDPath = regexp.MustCompile(`/(tickets|attachments)/[0-9]+`)

// dataField is the field name of a response body's data object.
func dataField(body json.RawMessage, name string) any {
	var m struct{ Data map[string]any }
	if json.Unmarshal(body, &m) != nil {
		return nil
	}
	return m.Data[name]
}
