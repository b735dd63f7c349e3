package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func TestMain(m *testing.M) { testenv.Main(m) }

// cli runs the berth binary with a clean environment of its own: a configuration
// directory of the test and the variables in env.
type cli struct {
	t   *testing.T
	bin string
	env []string
	dir string // the working directory berth runs in ("": the test's)
}

func newCLI(t *testing.T, env ...string) *cli {
	t.Helper()
	home := t.TempDir()
	return &cli{t: t, bin: testenv.BerthBinary(t), env: append([]string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, "config"),
		"PATH=" + os.Getenv("PATH"), "LANG=C"}, env...)}
}

type result struct {
	stdout, stderr string
	code           int
}

func (c *cli) runIn(stdin string, args ...string) result {
	c.t.Helper()
	return c.runWithin(2*time.Minute, stdin, args...)
}

// runWithin is runIn, berth killed after d.
func (c *cli) runWithin(d time.Duration, stdin string, args ...string) result {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, args...)
	cmd.Env, cmd.Dir = c.env, c.dir
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		c.t.Fatalf("berth %q: %v", args, err)
	}
	return r
}

func (c *cli) run(args ...string) result { c.t.Helper(); return c.runIn("", args...) }

// ok runs a command that must succeed and returns its stdout.
func (c *cli) ok(args ...string) string {
	c.t.Helper()
	r := c.run(args...)
	if r.code != 0 {
		c.t.Fatalf("berth %q: exit %d\n%s", args, r.code, r.stderr)
	}
	return r.stdout
}

// apiData is the data member of the API's answer to GET path, as decoded JSON.
func apiData(t *testing.T, env *testenv.Env, token, path string) any {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, env.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := env.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Data any }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
	}
	return body.Data
}

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
	return v
}

// TestJSONIsTheAPIData: -o json prints exactly the API's data object or list.
func TestJSONIsTheAPIData(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	acct := env.NewAccount("en", "100", "")
	c := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.Token)
	srv := decode(t, c.ok("server", "create", "--plan", firstPlan(t, c), "--location", "1", "--image", firstImage(t, c), "-o", "json"))
	name := srv.(map[string]any)["name"].(string)
	c.ok("project", "create", "web")
	c.ok("recipe", "create", "--name", "hello", "--script", "echo hi")
	c.ok("ssh-key", "create", "--name", "laptop", "--public-key", testenv.PublicKey(t)+" cli@berth")
	c.ok("snapshot", "create", name, "--name", "s1")
	c.ok("volume", "create", "--name", "data", "--size", "10", "--server", name, "--format", "xfs")
	recipe := jsonString(decode(t, c.ok("recipe", "describe", "hello", "-o", "json")).(map[string]any)["id"])
	op := jsonString(decode(t, c.ok("operation", "list", "-o", "json")).([]any)[0].(map[string]any)["id"])
	for _, tt := range []struct {
		args []string
		path string
	}{
		{[]string{"me"}, "/me"},
		{[]string{"location", "list"}, "/locations"},
		{[]string{"app", "list"}, "/apps"},
		{[]string{"server", "list"}, "/servers"},
		{[]string{"server", "describe", name}, "/servers/" + name},
		{[]string{"server", "rescale-options", name}, "/servers/" + name + "/rescale-options"},
		{[]string{"snapshot", "list", name}, "/servers/" + name + "/snapshots"},
		{[]string{"project", "list"}, "/projects"},
		{[]string{"recipe", "list"}, "/recipes"},
		{[]string{"recipe", "describe", "hello"}, "/recipes/" + recipe},
		{[]string{"ssh-key", "list"}, "/ssh-keys"},
		{[]string{"billing", "show"}, "/billing"},
		{[]string{"billing", "transactions"}, "/billing/transactions"},
		{[]string{"operation", "list"}, "/operations"},
		{[]string{"operation", "describe", op}, "/operations/" + op},
		{[]string{"volume", "list"}, "/volumes"},
		{[]string{"volume", "describe", "data"}, "/volumes/data"},
	} {
		got := decode(t, c.ok(append(tt.args, "-o", "json")...))
		if want := apiData(t, env, acct.Token, tt.path); !reflect.DeepEqual(got, want) {
			t.Errorf("berth %q -o json:\n%v\nwant GET %s's data:\n%v", tt.args, got, tt.path, want)
		}
	}
	if st := srv.(map[string]any)["status"]; st != "running" {
		t.Errorf("server create waited, yet the server it printed is %v", st)
	}
}

// firstPlan and firstImage are names of the first location's first in-stock plan and
// first image.
func firstPlan(t *testing.T, c *cli) string {
	t.Helper()
	var locs []struct {
		Plans []struct {
			Name    string
			InStock bool `json:"in_stock"`
		}
	}
	if err := json.Unmarshal([]byte(c.ok("location", "list", "-o", "json")), &locs); err != nil {
		t.Fatal(err)
	}
	for _, p := range locs[0].Plans {
		if p.InStock {
			return p.Name
		}
	}
	t.Fatal("no plan in stock")
	return ""
}

func firstImage(t *testing.T, c *cli) string {
	t.Helper()
	var locs []struct{ Images []struct{ Name string } }
	if err := json.Unmarshal([]byte(c.ok("location", "list", "-o", "json")), &locs); err != nil {
		t.Fatal(err)
	}
	return locs[0].Images[0].Name
}

// TestGolden: the tables and JSON of the catalog's lists, as testdata/*.golden hold
// them (go test -update rewrites them).
func TestGolden(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	acct := env.NewAccount("en", "100", "")
	c := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.Token)
	for _, tt := range []struct {
		golden string
		args   []string
	}{
		{"location-list.table", []string{"location", "list"}},
		{"location-list.wide", []string{"location", "list", "-o", "wide"}},
		{"location-list.json", []string{"location", "list", "-o", "json"}},
		{"location-list.yaml", []string{"location", "list", "-o", "yaml"}},
		{"location-list.quiet", []string{"location", "list", "--quiet"}},
		{"plan-list.table", []string{"plan", "list"}},
		{"plan-list.json", []string{"plan", "list", "-o", "json"}},
		{"plan-list.columns", []string{"plan", "list", "-o", "columns=name,in_stock,price_hourly"}},
		{"image-list.table", []string{"image", "list"}},
		{"license-list.table", []string{"license", "list"}},
		{"license-list.wide", []string{"license", "list", "-o", "wide"}},
		{"image-list.json", []string{"image", "list", "-o", "json"}},
		{"app-list.table", []string{"app", "list"}},
		{"app-list.json", []string{"app", "list", "-o", "json"}},
		{"server-list-empty.table", []string{"server", "list"}},
		{"server-list-empty.json", []string{"server", "list", "-o", "json"}},
	} {
		got := c.ok(tt.args...)
		path := filepath.Join("testdata", tt.golden+".golden")
		if *update {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("berth %q:\n%s\nwant (%s):\n%s", tt.args, got, path, want)
		}
	}
}

// TestExitCodes: each exit code a script branches on, from a real Berth.
func TestExitCodes(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{SimTimeScale: 0.2})
	acct := env.NewAccount("en", "100", "")
	c := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.Token)
	plan, image := firstPlan(t, c), firstImage(t, c)
	busy := strings.TrimSpace(c.ok("server", "create", "--plan", plan, "--location", "1", "--image", image, "--no-wait", "--quiet"))

	for _, tt := range []struct {
		name   string
		args   []string
		code   int
		stderr []string
	}{
		{"success", []string{"me"}, 0, nil},
		{"usage", []string{"servr", "list"}, 1, []string{"unknown command"}},
		{"bad output", []string{"me", "-o", "xml"}, 1, []string{"unknown output"}},
		{"not found", []string{"server", "describe", "no-such-server"}, 3, []string{"(404 not_found)"}},
		{"empty server", []string{"server", "describe", ""}, 1, []string{"SERVER is empty"}},
		{"server named .", []string{"server", "describe", "."}, 3, []string{`no server "."`}},
		{"volume named ..", []string{"volume", "delete", ".."}, 3, []string{`no volume ".."`}},
		{"blank volume", []string{"volume", "resize", " ", "--size", "20"}, 1, []string{"VOLUME is empty"}},
		{"empty RRset name", []string{"rrset", "set", "example.com", "", "A", "192.0.2.1"}, 1, []string{"NAME is empty"}},
		{"empty snapshot", []string{"snapshot", "restore", busy, ""}, 1, []string{"SNAPSHOT is empty"}},
		{"unknown plan name", []string{"server", "create", "--plan", "no-such-plan", "--location", "1", "--image", image}, 3, []string{`no plan "no-such-plan"`}},
		{"validation", []string{"server", "create", "--plan", "999999", "--location", "1", "--root-password", "short"}, 4,
			[]string{"(422 validation_failed)", "  plan_id: ", "  image_id: ", "  root_password: "}},
		{"busy", []string{"server", "poweroff", busy}, 5, []string{"(409 busy)", "berth operation wait"}},
		{"unauthenticated", []string{"me", "--token", "berth_nope"}, 6, []string{"(401 unauthenticated)"}},
		{"forbidden", []string{"server", "create", "--plan", plan, "--location", "1", "--image", image, "--token", acct.NewToken("read")}, 6,
			[]string{"(403 missing_scope)"}},
	} {
		r := c.run(tt.args...)
		if r.code != tt.code {
			t.Errorf("%s: berth %q: exit %d, want %d\n%s", tt.name, tt.args, r.code, tt.code, r.stderr)
		}
		for _, s := range tt.stderr {
			if !strings.Contains(r.stderr, s) {
				t.Errorf("%s: berth %q: stderr %q lacks %q", tt.name, tt.args, r.stderr, s)
			}
		}
	}
}

// TestRateLimitedExit8: a 429 left after the retries (none, with --retries 0) exits 8.
func TestRateLimitedExit8(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{RateLimit: 2})
	acct := env.NewAccount("en", "100", "")
	c := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.Token)
	for i := range 10 {
		r := c.run("me", "--retries", "0")
		if r.code == 8 {
			if !strings.Contains(r.stderr, "(429 rate_limited)") {
				t.Errorf("429: stderr %q", r.stderr)
			}
			return
		}
		if r.code != 0 {
			t.Fatalf("call %d: exit %d %s", i, r.code, r.stderr)
		}
	}
	t.Fatal("10 calls with a limit of 2 a minute, and no exit 8")
}

// TestCompletion: server arguments complete with the account's server names.
func TestCompletion(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	acct := env.NewAccount("en", "100", "")
	c := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.Token)
	name := strings.TrimSpace(c.ok("server", "create", "--plan", firstPlan(t, c), "--location", "1", "--image", firstImage(t, c),
		"--no-wait", "-o", "columns=name"))
	name = strings.TrimSpace(strings.TrimPrefix(name, "name:"))
	for _, args := range [][]string{{"server", "describe", ""}, {"server", "poweroff", "server-"}, {"snapshot", "create", ""}} {
		if got := c.ok(append([]string{"__complete"}, args...)...); !strings.Contains(got, name+"\t") {
			t.Errorf("berth __complete %q: %q lacks %s", args, got, name)
		}
	}
	for _, sh := range []string{"bash", "zsh", "fish"} {
		if got := c.ok("completion", sh); !strings.Contains(got, "berth") {
			t.Errorf("completion %s: %q", sh, got)
		}
	}
}

type failingCreate struct{ compute.Driver }

func (f *failingCreate) Create(context.Context, string, compute.Spec) (compute.Machine, error) {
	return compute.Machine{}, fmt.Errorf("%w: no host has room", compute.ErrFailed)
}

// TestOperationFailedExit7: an awaited operation that ends in error exits 7, with
// plain progress lines on stderr (not a terminal).
func TestOperationFailedExit7(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{WrapDriver: func(d compute.Driver) compute.Driver { return &failingCreate{d} }})
	acct := env.NewAccount("en", "100", "")
	c := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.Token)
	r := c.run("server", "create", "--plan", firstPlan(t, c), "--location", "1", "--image", firstImage(t, c))
	if r.code != 7 || !strings.Contains(r.stderr, "Waiting for operation") || !strings.Contains(r.stderr, "no host has room") ||
		strings.Contains(r.stderr, "\r") {
		t.Errorf("server create with a failing provisioning: exit %d, stderr %q; want 7, plain lines and the reason", r.code, r.stderr)
	}
}

// TestConfigPrecedence: --url/--token beat BERTH_URL/BERTH_TOKEN, which beat the
// context file; --context beats BERTH_CONTEXT, which beats the current context.
func TestConfigPrecedence(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	file, envAcct, flagAcct, other := env.NewAccount("en", "", ""), env.NewAccount("en", "", ""), env.NewAccount("en", "", ""), env.NewAccount("en", "", "")
	c := newCLI(t)
	if r := c.runIn(file.Token+"\n", "context", "create", "file", "--url", env.URL, "--token-stdin"); r.code != 0 {
		t.Fatalf("context create: %d %s", r.code, r.stderr)
	}
	if r := c.runIn(other.Token+"\n", "context", "create", "other", "--url", env.URL, "--token-stdin"); r.code != 0 {
		t.Fatalf("context create: %d %s", r.code, r.stderr)
	}
	c.ok("context", "use", "file")
	cfgPath := filepath.Join(strings.TrimPrefix(c.env[1], "XDG_CONFIG_HOME="), "berth", "config.toml")
	if st, err := os.Stat(cfgPath); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("config file %s: %v, %v; want mode 0600", cfgPath, st, err)
	}
	if got := c.ok("context", "list"); !strings.Contains(got, "\n*        file    "+env.URL+"\n") || strings.Count(got, "*") != 1 {
		t.Errorf("context list, file current:\n%s", got)
	}
	id := func(c *cli, args ...string) int64 {
		t.Helper()
		me := decode(t, c.ok(append([]string{"me", "-o", "json"}, args...)...)).(map[string]any)
		return int64(me["id"].(float64))
	}
	if got := id(c); got != file.ID {
		t.Errorf("context file alone: account %d, want %d", got, file.ID)
	}
	withEnv := &cli{t: t, bin: c.bin, env: append(append([]string{}, c.env...), "BERTH_TOKEN="+envAcct.Token)}
	if got := id(withEnv); got != envAcct.ID {
		t.Errorf("BERTH_TOKEN over the file: account %d, want %d", got, envAcct.ID)
	}
	if got := id(withEnv, "--token", flagAcct.Token); got != flagAcct.ID {
		t.Errorf("--token over BERTH_TOKEN: account %d, want %d", got, flagAcct.ID)
	}
	// A second Berth, where the file's token means nothing: BERTH_URL pointing there
	// gets a 401.
	other2 := testenv.New(t)
	elsewhere := &cli{t: t, bin: c.bin, env: append(append([]string{}, c.env...), "BERTH_URL="+other2.URL)}
	if r := elsewhere.run("me"); r.code != 6 {
		t.Errorf("BERTH_URL over the file's URL: exit %d (%s), want 6 from the other Berth", r.code, r.stderr)
	}
	if got := id(elsewhere, "--url", env.URL); got != file.ID {
		t.Errorf("--url over BERTH_URL: account %d, want %d", got, file.ID)
	}
	ctxEnv := &cli{t: t, bin: c.bin, env: append(append([]string{}, c.env...), "BERTH_CONTEXT=other")}
	if got := id(ctxEnv); got != other.ID {
		t.Errorf("BERTH_CONTEXT over the current context: account %d, want %d", got, other.ID)
	}
	if got := id(ctxEnv, "--context", "file"); got != file.ID {
		t.Errorf("--context over BERTH_CONTEXT: account %d, want %d", got, file.ID)
	}
	if r := c.run("me", "--context", "nope"); r.code != 1 || !strings.Contains(r.stderr, `no context "nope"`) {
		t.Errorf("--context nope: exit %d %q", r.code, r.stderr)
	}
	c.ok("context", "delete", "file")
	if got := c.ok("context", "list", "--quiet"); got != "other\n" {
		t.Errorf("context list after delete: %q", got)
	}
	// No context in use, no variables: the default URL, without a token (a Berth
	// listening there would answer 401).
	if r := c.run("me", "--retries", "0"); r.code == 0 || !strings.Contains(r.stderr, "127.0.0.1:8080") && r.code != 6 {
		t.Errorf("without configuration: exit %d %q, want a failure at the default URL", r.code, r.stderr)
	}
}

// TestNoHTTPOfItsOwn: the CLI reaches the API only through the SDK: no file of
// package main but the tests imports net/http (or any package under it).
func TestNoHTTPOfItsOwn(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for imp := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		if imp == "net/http" || strings.HasPrefix(imp, "net/http/") || imp == "net" || imp == "net/url" {
			t.Errorf("cmd/berth imports %s: it must call the API through package client only", imp)
		}
	}
	if !strings.Contains(string(out), "github.com/berthhq/berth/client") {
		t.Errorf("cmd/berth does not import the SDK: %s", out)
	}
}

// TestErrorsInTheAccountsLanguage: an error is printed as the API sent it, in the
// account's language.
func TestErrorsInTheAccountsLanguage(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	en, de := env.NewAccount("en", "100", ""), env.NewAccount("de", "100", "")
	args := []string{"server", "create", "--plan", "999999", "--location", "1"}
	r1 := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+en.Token).run(args...)
	r2 := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+de.Token).run(args...)
	if r1.code != 4 || r2.code != 4 || r1.stderr == r2.stderr || !strings.Contains(r2.stderr, "  plan_id: ") {
		t.Errorf("422 in en and de: exit %d %q, exit %d %q; want 4 twice, in two languages", r1.code, r1.stderr, r2.code, r2.stderr)
	}
}

// TestTokenPrompt: context create without --token-stdin asks for the token on the
// terminal (script(1) gives it one), and refuses when there is none.
func TestTokenPrompt(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("no script(1) to run berth on a pseudo-terminal")
	}
	env := testenv.New(t)
	acct := env.NewAccount("en", "100", "")
	c := newCLI(t)
	if r := c.run("context", "create", "prod", "--url", env.URL); r.code != 1 || !strings.Contains(r.stderr, "--token-stdin") {
		t.Errorf("context create without a terminal: exit %d %q", r.code, r.stderr)
	}
	if r := c.runIn("\n", "context", "create", "prod", "--url", env.URL, "--token-stdin"); r.code != 1 || !strings.Contains(r.stderr, "empty token") {
		t.Errorf("context create with an empty token: exit %d %q", r.code, r.stderr)
	}
	cmd := exec.Command("script", "-qec", c.bin+" context create prod --url "+env.URL, "/dev/null")
	cmd.Env = c.env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); pw.Close() }()
	// The token is typed once the prompt shows (and echo is off a moment later).
	buf := make([]byte, 4096)
	for !strings.Contains(out.String(), "Token: ") {
		n, err := pr.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			t.Fatalf("no prompt: %q %v", out.String(), err)
		}
	}
	time.Sleep(300 * time.Millisecond)
	io.WriteString(stdin, acct.Token+"\n")
	defer stdin.Close()
	rest, _ := io.ReadAll(pr)
	out.Write(rest)
	if !strings.Contains(out.String(), "created") || strings.Contains(out.String(), acct.Token) {
		t.Fatalf("context create on a terminal: %q (want the context created, the token not echoed)", out.String())
	}
	me := decode(t, c.ok("me", "-o", "json")).(map[string]any)
	if int64(me["id"].(float64)) != acct.ID {
		t.Errorf("the prompted token is not the context's: %v", me)
	}
}
