// Package testenv runs a whole Berth in-process for tests: SQLite in a temporary
// directory, the simulated driver at high speed, and the real HTTP handler behind
// httptest. Every response a test sees through Env.Client is validated against
// api/openapi.yaml.
package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/berthhq/berth/internal/apitest"
	"github.com/berthhq/berth/internal/app"
	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/compute/libvirtdriver"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/realip"
	"github.com/berthhq/berth/internal/store/sqlstore"
	"github.com/berthhq/berth/internal/telemetry"
	"github.com/berthhq/berth/internal/testnet"
	"github.com/berthhq/berth/internal/testpg"
	"github.com/berthhq/berth/internal/webhook"
)

// Account passwords are hashed at bcrypt's lowest cost in every test binary that runs
// a Berth through this package (it is imported by tests only): at the default cost
// the race detector makes each hash take about a second of CPU, and NewAccount hashes
// one for every account a test makes (a CPU profile of the API package's tests: 8 %
// of it). A binary berthd that a test starts keeps the default. Set here, before any
// test runs, so that no test's write of it races with another's read.
func init() { ops.PasswordCost = bcrypt.MinCost }

// Options tune an Env.
type Options struct {
	SimTimeScale float64 // default 0.001: a 30 s provisioning takes 30 ms
	RateLimit    int
	// RateWindow is the rate limit's rolling window (default 1 minute): a window of
	// seconds makes a real 429 with a Retry-After a test can wait for.
	RateWindow time.Duration
	// Unreachable, when set, says a server's host cannot be reached: operations on
	// it answer 503 unavailable (as under the libvirt driver).
	Unreachable func(ctx context.Context, name string) bool
	DataDir     string // default: a fresh temporary directory
	// Clock replaces the system clock for billing and records (see FakeClock).
	Clock func() time.Time
	// WrapDriver wraps the compute driver, to inject faults.
	WrapDriver func(compute.Driver) compute.Driver
	// Driver is the compute driver (default sim); Libvirt tunes the libvirt one.
	Driver  string
	Libvirt libvirtdriver.Options
	// FetchPoll is how often the job queue polls for work (default 1 s; berthd's is
	// 100 ms). Work committed in this process is fetched at once (app's wake job, in
	// each queue), so the poll only finds jobs that came due later (a retry) or that
	// another process committed. A short poll costs: on SQLite each poll of each queue
	// parses River's fetch query anew, and at berthd's 100 ms an idle Berth took 4 % of
	// a core under -race, at 10 ms a whole core; the suite keeps hundreds alive.
	FetchPoll time.Duration
	// SweepEvery is how often stranded jobs and operations are looked for (default
	// berthd's).
	SweepEvery time.Duration
	// Telemetry collects the operators' metrics (default: none).
	Telemetry *telemetry.Metrics
	// PublicURL and CORSOrigins are serve's --public-url and --cors-origin.
	PublicURL   string
	CORSOrigins []string
	// TrustedProxies is serve's --trusted-proxy (the test's client is 127.0.0.1).
	TrustedProxies []string
	// IPv6LimitPrefix is serve's --ipv6-limit-prefix (0: its default, 64).
	IPv6LimitPrefix int
	// Sandbox is serve's --sandbox: the /sandbox/v1 API and its faults.
	Sandbox bool
	// WrapBackfill wraps the metrics backfill of a test clock's advance (Sandbox).
	WrapBackfill func(ops.BackfillFunc) ops.BackfillFunc
	// Logger is the Berth's log (default: none; under -v, the warnings and errors
	// in the test's output).
	Logger *slog.Logger
	// Consoles caps the serial console sessions (serve's --console-sessions-...;
	// default: ops' defaults).
	Consoles ops.ConsoleCaps
	// WebhookAllowPrivate is serve's --webhook-allow-private (on with Sandbox).
	WebhookAllowPrivate bool
	// Webhook tunes the webhook deliveries' client (a short Timeout). Its Resolver
	// and Dial default to ones that never leave the machine: no name resolves but
	// localhost, and only 127.0.0.1 and ::1 are dialed (NoNetwork).
	Webhook webhook.Options
	// ServeDNS is serve's --dns-addr on a free port of 127.0.0.1 (Env.DNSAddr): the
	// embedded nameserver answers the store's zones and the servers' names there,
	// under the default domain and nameservers (docs/operating.md, DNS).
	ServeDNS bool
	// DNS is serve's --dns-* and --powerdns-* (a Publisher publishes every change).
	DNS ops.DNSOptions
	// Mail is serve's --smtp-url, --mail-from and --support-email (default: no SMTP,
	// each mail in the log).
	Mail app.MailConfig
	// MetricsURL is serve's --metrics-url: a VictoriaMetrics keeps the servers' load
	// samples (internal/metrics/victoria/victoriatest starts one).
	MetricsURL string
}

// NoNetwork are webhook client options under which a delivery reaches nothing but
// this machine's loopback: localhost resolves to 127.0.0.1, no other name resolves,
// and a connection to another address fails without a packet sent.
func NoNetwork(o webhook.Options) webhook.Options {
	if o.Resolver == nil {
		o.Resolver = loopbackResolver{}
	}
	if o.Dial == nil {
		o.Dial = func(ctx context.Context, network, address string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return nil, err
			}
			if ip, err := netip.ParseAddr(host); err != nil || !ip.IsLoopback() {
				return nil, fmt.Errorf("testenv dials only loopback, not %s", address)
			}
			var d net.Dialer
			return d.DialContext(ctx, network, address)
		}
	}
	return o
}

type loopbackResolver struct{}

func (loopbackResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if host == "localhost" {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, &net.DNSError{Err: "testenv resolves no name but localhost", Name: host, IsNotFound: true}
}

// unreachable is a driver whose hosts are away as a test says (Options.Unreachable).
type unreachable struct {
	compute.Driver
	unreachable func(ctx context.Context, name string) bool
}

func (u unreachable) Unreachable(ctx context.Context, name string) bool {
	return u.unreachable(ctx, name)
}

// Unwrap gives the driver's other abilities (volumes, consoles) through it.
func (u unreachable) Unwrap() []compute.Driver { return []compute.Driver{u.Driver} }

// Env is a running Berth.
type Env struct {
	App    *app.App
	Server *httptest.Server
	URL    string // base URL ending in /v1
	// Root is the server's root URL, where the console is.
	Root   string
	Client *http.Client
	// DNSAddr is where the Berth answers DNS, UDP and TCP (Options.ServeDNS; "": nowhere).
	DNSAddr string
	t       testing.TB

	stopDNS   func() error
	closeOnce sync.Once
}

var seq atomic.Int64

// New starts a Berth for one test; it stops when the test ends.
func New(t testing.TB, opts ...Options) *Env {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.SimTimeScale == 0 {
		o.SimTimeScale = 0.001
	}
	if o.FetchPoll == 0 {
		o.FetchPoll = time.Second
	}
	fresh := o.DataDir == ""
	if fresh {
		o.DataDir = t.TempDir()
	}
	var databaseURL string
	if Postgres() {
		databaseURL = PostgresFor(t, o.DataDir)
	} else if fresh {
		placeSQLiteTemplate(t, o.DataDir)
	}
	proxies, err := realip.Parse(o.TrustedProxies)
	if err != nil {
		t.Fatalf("trusted proxies: %v", err)
	}
	var grouping realip.Grouping
	if o.IPv6LimitPrefix != 0 {
		if grouping, err = realip.NewGrouping(o.IPv6LimitPrefix); err != nil {
			t.Fatalf("IPv6 limit prefix %d: %v", o.IPv6LimitPrefix, err)
		}
	}
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler) // takes no line: none is even formatted
	switch {
	case o.Logger != nil:
		log = o.Logger
	case testing.Verbose():
		log = slog.New(slog.NewTextHandler(&tlog{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	wrap := o.WrapDriver
	if o.Unreachable != nil {
		// The driver's Reachability, as the libvirt driver's is.
		inner := wrap
		wrap = func(d compute.Driver) compute.Driver {
			if inner != nil {
				d = inner(d)
			}
			return unreachable{Driver: d, unreachable: o.Unreachable}
		}
	}
	var dnsServer app.DNSServer
	if o.ServeDNS {
		dnsServer.Addr = testnet.FreeDNSAddr(t)
	}
	// Metering runs when a test asks for it (Service.Meter) and once at start; a pass
	// of its own in the middle of a test would be correct too, but harder to reason about.
	a, err := app.Open(ctx, app.Config{DataDir: o.DataDir, DatabaseURL: databaseURL, SimTimeScale: o.SimTimeScale, RateLimit: o.RateLimit, RateWindow: o.RateWindow,
		Logger: log, FetchPoll: o.FetchPoll, Clock: o.Clock, WrapDriver: wrap, WrapBackfill: o.WrapBackfill, MeterEvery: 24 * time.Hour,
		Driver: o.Driver, Libvirt: o.Libvirt, SweepEvery: o.SweepEvery, Telemetry: o.Telemetry,
		PublicURL: o.PublicURL, CORSOrigins: o.CORSOrigins, TrustedProxies: proxies, Grouping: grouping, Sandbox: o.Sandbox, Consoles: o.Consoles,
		WebhookAllowPrivate: o.WebhookAllowPrivate, Webhook: NoNetwork(o.Webhook), DNSServer: dnsServer, DNS: o.DNS, Mail: o.Mail,
		MetricsURL: o.MetricsURL})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if err := a.StartWorkers(ctx); err != nil {
		t.Fatalf("start workers: %v", err)
	}
	h, err := a.WebHandler()
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	stopDNS, err := a.ServeDNS() // nothing without an address
	if err != nil {
		_ = a.Close(ctx)
		t.Fatalf("serve DNS: %v", err)
	}
	srv := httptest.NewServer(h)
	e := &Env{App: a, Server: srv, URL: srv.URL + "/v1", Root: srv.URL, DNSAddr: dnsServer.Addr, t: t, stopDNS: stopDNS}
	e.Client = &http.Client{Transport: apitest.New(t).Transport(t, http.DefaultTransport), Timeout: 90 * time.Second}
	t.Cleanup(e.Close)
	return e
}

// sqliteTemplate is a store migrated once for the whole test process (app.Migrate),
// the bytes of its database file: a new Berth starts from a copy of it. Migrating
// anew cost each Berth 0.6 s of CPU under -race, three quarters of its start, and the
// suite starts thousands. What starts from the copy is what serve starts from after
// `berthd migrate`: Open finds the schema current and does the rest as always.
var sqliteTemplate struct {
	once sync.Once
	db   []byte
	err  error
}

// placeSQLiteTemplate writes the migrated store into the new data directory dir.
func placeSQLiteTemplate(t testing.TB, dir string) {
	t.Helper()
	sqliteTemplate.once.Do(func() {
		tmp, err := os.MkdirTemp("", "berth-testenv-template-")
		if err != nil {
			sqliteTemplate.err = err
			return
		}
		defer os.RemoveAll(tmp)
		if err := app.Migrate(context.Background(), app.Config{DataDir: tmp}); err != nil {
			sqliteTemplate.err = fmt.Errorf("migrate the template store: %w", err)
			return
		}
		if _, err := os.Stat(filepath.Join(tmp, sqlstore.DBFile+"-wal")); err == nil {
			sqliteTemplate.err = errors.New("the template store kept a WAL file after closing")
			return
		}
		sqliteTemplate.db, sqliteTemplate.err = os.ReadFile(filepath.Join(tmp, sqlstore.DBFile))
	})
	if sqliteTemplate.err != nil {
		t.Fatal(sqliteTemplate.err)
	}
	if err := os.WriteFile(filepath.Join(dir, sqlstore.DBFile), sqliteTemplate.db, 0o600); err != nil {
		t.Fatal(err)
	}
}

// Close stops the Berth before the test ends (as a stopped berthd: jobs in flight
// resume at the next start on the same data directory). Closing twice is harmless.
func (e *Env) Close() {
	e.closeOnce.Do(func() {
		_ = e.stopDNS()
		e.Server.Close()
		_ = e.App.Close(context.Background())
	})
}

// FakeClock is a clock that moves only when told. It is safe for concurrent use.
type FakeClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewFakeClock returns a clock showing start.
func NewFakeClock(start time.Time) *FakeClock { return &FakeClock{now: start.UTC()} }

// Now returns the clock's time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock on by d.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Set moves the clock to t.
func (c *FakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t.UTC()
	c.mu.Unlock()
}

type tlog struct{ t testing.TB }

func (l *tlog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// Account is a test account with a token.
type Account struct {
	ID    int64
	Token string
	env   *Env
}

// NewAccount creates an account with credit and a token holding scopes ("" = all).
func (e *Env) NewAccount(language, credit, scopes string) *Account {
	e.t.Helper()
	ctx := context.Background()
	if credit == "" {
		credit = "100"
	}
	c, err := hosting.ParseMoney(credit)
	if err != nil {
		e.t.Fatal(err)
	}
	a, err := e.App.Service.CreateAccount(ctx, ops.NewAccount{Email: fmt.Sprintf("user%d@example.com", seq.Add(1)),
		Password: "correct horse battery", Language: language, Credit: c})
	if err != nil {
		e.t.Fatal(err)
	}
	acct := &Account{ID: a.ID, env: e}
	acct.Token = acct.NewToken(scopes)
	return acct
}

// NewToken issues another token for the account ("" = all scopes).
func (a *Account) NewToken(scopes string) string {
	a.env.t.Helper()
	if scopes == "" {
		var all []string
		for _, s := range hosting.AllScopes {
			all = append(all, string(s))
		}
		scopes = strings.Join(all, ",")
	}
	_, secret, err := a.env.App.Service.CreateToken(context.Background(), a.ID, "test", scopes, 0)
	if err != nil {
		a.env.t.Fatal(err)
	}
	return secret
}

// Response is a decoded answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v.
func (r *Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// Map decodes the body into a generic map.
func (r *Response) Map(t testing.TB) map[string]any {
	var m map[string]any
	r.JSON(t, &m)
	return m
}

// Do sends a request with the account's token (body: nil, a string, or a value to
// marshal).
func (a *Account) Do(method, path string, body any) *Response {
	return a.env.Do(a.Token, method, path, body, nil)
}

// DoWith is Do with extra headers (they replace the default Content-Type).
func (a *Account) DoWith(method, path string, body any, header http.Header) *Response {
	return a.env.Do(a.Token, method, path, body, header)
}

// Sandbox sends a request to the sandbox API (path under /sandbox/v1) with the
// account's token.
func (a *Account) Sandbox(method, path string, body any) *Response {
	a.env.t.Helper()
	return a.env.SandboxDo(a.Token, method, path, body, nil)
}

// Do sends a request with token (may be empty) and extra headers.
func (e *Env) Do(token, method, path string, body any, header http.Header) *Response {
	e.t.Helper()
	return e.do(e.URL+path, token, method, body, header)
}

// SandboxDo is Do on the sandbox API: path is under /sandbox/v1.
func (e *Env) SandboxDo(token, method, path string, body any, header http.Header) *Response {
	e.t.Helper()
	return e.do(e.Root+"/sandbox/v1"+path, token, method, body, header)
}

func (e *Env) do(url, token, method string, body any, header http.Header) *Response {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := e.Client.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: data}
}

// Want fails the test unless the response has status want.
func (r *Response) Want(t testing.TB, want int) *Response {
	t.Helper()
	if r.Status != want {
		t.Fatalf("status %d, want %d; body: %s", r.Status, want, r.Body)
	}
	return r
}

// WaitStatus polls a server every 5 ms until it shows status with no operation (or
// the timeout passes).
func (a *Account) WaitStatus(t testing.TB, server string, status string, timeout time.Duration) map[string]any {
	t.Helper()
	return a.WaitStatusEvery(t, server, status, timeout, 5*time.Millisecond)
}

// WaitStatusEvery is WaitStatus polling every poll: a real guest's tests poll
// slower, so as not to take CPU from the guests they wait for.
func (a *Account) WaitStatusEvery(t testing.TB, server string, status string, timeout, poll time.Duration) map[string]any {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		r := a.Do("GET", "/servers/"+server, nil).Want(t, 200)
		data := r.Map(t)["data"].(map[string]any)
		if data["status"] == status && data["operation"] == nil {
			return data
		}
		if time.Now().After(deadline) {
			t.Fatalf("server %s: status %v (operation %v) after %s, want %s", server, data["status"], data["operation"], timeout, status)
		}
		time.Sleep(poll)
	}
}

// As is an existing account (say, of an Env before a restart) calling through e.
func (e *Env) As(a *Account) *Account { return &Account{ID: a.ID, Token: a.Token, env: e} }

// AssertLedger checks the ledger invariants of docs/api.md, Billing over every account:
// the credit equals the sum of the account's transactions, each entry's balance_after
// (as the API shows the ledger: a metering pass's rows hour by hour) is the running
// sum up to it, and no (resource, hour) is charged twice.
func (e *Env) AssertLedger(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	db := e.App.DB.WriteDB()
	rows, err := db.QueryContext(ctx, `SELECT a.id, a.credit, COALESCE((SELECT SUM(amount) FROM transactions t WHERE t.account_id = a.id), 0)
		FROM accounts a`)
	if err != nil {
		t.Fatalf("ledger: %v", err)
	}
	var accounts []int64
	for rows.Next() {
		var id, credit, sum int64
		if err := rows.Scan(&id, &credit, &sum); err != nil {
			t.Fatal(err)
		}
		accounts = append(accounts, id)
		if credit != sum {
			t.Errorf("ledger: account %d has credit %s but its transactions sum to %s", id, hosting.Money(credit), hosting.Money(sum))
		}
	}
	rows.Close()
	type hour struct {
		typ string
		id  int64
		at  int64
	}
	charged := map[hour]int64{}
	for _, acct := range accounts {
		list, total, err := e.App.DB.Transactions(ctx, acct, 0, 0)
		if err != nil {
			t.Fatalf("ledger of account %d: %v", acct, err)
		}
		if len(list) != total {
			t.Errorf("ledger: account %d shows %d entries of %d", acct, len(list), total)
		}
		running := int64(0)
		ids := map[int64]bool{}
		for i := len(list) - 1; i >= 0; i-- {
			tr := list[i]
			running += int64(tr.Amount)
			if int64(tr.BalanceAfter) != running {
				t.Errorf("ledger: transaction %d shows balance %s after it, but the entries up to it sum to %s",
					tr.ID, tr.BalanceAfter, hosting.Money(running))
			}
			if ids[tr.ID] {
				t.Errorf("ledger: account %d shows id %d twice", acct, tr.ID)
			}
			ids[tr.ID] = true
			if tr.Type == hosting.TxCharge && tr.ResourceID != nil && tr.PeriodStart != nil {
				h := hour{tr.ResourceType, *tr.ResourceID, tr.PeriodStart.UnixMilli()}
				if prev, twice := charged[h]; twice {
					t.Errorf("ledger: %s %d charged twice for its hour at %s (entries %d and %d)", h.typ, h.id, tr.PeriodStart, prev, tr.ID)
				}
				charged[h] = tr.ID
			}
		}
	}
	// account_spend, the days' spending written with the ledger, is the ledger's.
	var off int
	if err := db.QueryRowContext(ctx, sqlstore.AccountSpendMismatches).Scan(&off); err != nil {
		t.Fatalf("ledger: %v", err)
	}
	if off > 0 {
		t.Errorf("ledger: account_spend differs from the ledger on %d (account, day) pairs", off)
	}
}

// EnvStore names the variable that picks the store every Env runs on: "postgres"
// runs them on PostgreSQL (a new database per data directory, on the server of
// BERTH_TEST_DATABASE_URL); anything else on SQLite.
const EnvStore = "BERTH_TEST_STORE"

// Postgres reports whether Envs run on PostgreSQL.
func Postgres() bool { return os.Getenv(EnvStore) == "postgres" }

var (
	pgMu  sync.Mutex
	pgFor = map[string]string{}
)

// PostgresFor is the URL of the PostgreSQL database standing for data directory
// dir: a new one the first time, the same one when a test opens dir again (a
// restart, or berthd's commands run on dir). It is dropped when t ends.
func PostgresFor(t testing.TB, dir string) string {
	pgMu.Lock()
	defer pgMu.Unlock()
	if u, ok := pgFor[dir]; ok {
		return u
	}
	u := testpg.NewDatabase(t)
	pgFor[dir] = u
	t.Cleanup(func() {
		pgMu.Lock()
		delete(pgFor, dir)
		pgMu.Unlock()
	})
	return u
}

// SkipOnPostgres skips a test that is about SQLite's files (a full disk under the
// data directory, the lock file) when Envs run on PostgreSQL.
func SkipOnPostgres(t testing.TB, why string) {
	t.Helper()
	if Postgres() {
		t.Skip("SQLite only: " + why)
	}
}
