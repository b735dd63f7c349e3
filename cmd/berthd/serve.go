package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/berthhq/berth/internal/app"
	"github.com/berthhq/berth/internal/asynclog"
	"github.com/berthhq/berth/internal/compute/libvirtdriver"
	"github.com/berthhq/berth/internal/dnszone"
	"github.com/berthhq/berth/internal/fixtures"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/httpapi"
	"github.com/berthhq/berth/internal/metrics/victoria"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/realip"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/store/sqlstore"
	"github.com/berthhq/berth/internal/telemetry"
)

type serveFlags struct {
	addr          string
	driver        string
	simTimeScale  float64
	tlsCert       string
	tlsKey        string
	demo          bool
	sandbox       bool
	seed          string
	rateLimit     int
	allowInsecure bool
	// webhooks
	webhookAllowPrivate bool
	// behind a proxy, and browser clients
	publicURL   string
	corsOrigins []string
	proxies     []string
	ipv6Limit   int
	// operations
	shutdownTimeout time.Duration
	stepAllowance   time.Duration
	sweepEvery      time.Duration
	metricsAddr     string
	metricsURL      string
	readCache       int
	// serial consoles
	consolesPerServer  int
	consolesPerAccount int
	consoleLease       time.Duration
	// libvirt driver
	libvirtPrefix    string
	libvirtMaxMemory int
	// DNS (docs/operating.md, DNS)
	dnsAddr          string
	dnsNameservers   string
	dnsDefaultDomain string
	dnsAllowTransfer []string
	powerdns         powerdnsFlags
	// mail (docs/operating.md, Mail)
	smtpURL      string
	mailFrom     string
	supportEmail string
	// databaseOrigin is where --database came from: the flag or its environment
	// variable (globals.databaseOrigin), for an error to name.
	databaseOrigin string
}

func serveCmd(g *globals) *cobra.Command {
	f := &serveFlags{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the hosting API and carry out operations",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.databaseOrigin = g.databaseOrigin(cmd)
			if !cmd.Flags().Changed("smtp-url") {
				// Kept out of the command line, where every local user can read it.
				f.smtpURL = os.Getenv(smtpURLEnv)
			}
			return serve(cmd.Context(), g, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", "127.0.0.1:8080", "address to listen on")
	fl.StringVar(&f.driver, "driver", "sim", "compute driver: "+strings.Join(app.DriverNames(), ", "))
	fl.Float64Var(&f.simTimeScale, "sim-time-scale", 1, "factor on the simulated driver's durations (1 realistic, 0.01 fast)")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "TLS certificate file (PEM)")
	fl.StringVar(&f.tlsKey, "tls-key", "", "TLS key file (PEM)")
	fl.BoolVar(&f.demo, "demo", false, "create (once) a demo account with credit and an all-scopes token, and print the token")
	fl.BoolVar(&f.sandbox, "sandbox", false, "serve the sandbox API for client authors under /sandbox/v1: injected faults, "+
		"a request journal (docs/api.md, The sandbox; sim driver and SQLite --data only, never in production)")
	fl.StringVar(&f.seed, "seed", "", "with --sandbox: a YAML file of accounts to create at start if absent, with fixed tokens for a "+
		"client's CI and what to seed in them (docs/sandbox-seed.md); starting again with the same file changes nothing")
	fl.IntVar(&f.rateLimit, "rate-limit", 120, "requests per minute per token")
	fl.BoolVar(&f.webhookAllowPrivate, "webhook-allow-private", false, "let webhooks deliver to loopback, private and the address "+
		"pools' addresses, and over plain http: a receiver on this machine (on under --sandbox; never in production, docs/SECURITY.md)")
	fl.BoolVar(&f.allowInsecure, "allow-insecure-http", false, "serve plain HTTP on a non-loopback address (behind a TLS-terminating proxy)")
	fl.StringVar(&f.publicURL, "public-url", "", "the address clients reach the service at, without /v1, e.g. https://api.example.com: "+
		"the API's absolute links (pagination) start with it (default: the request's scheme and Host)")
	fl.StringArrayVar(&f.corsOrigins, "cors-origin", nil, "a browser origin whose scripts may call the API, e.g. https://app.example.com "+
		"(repeatable; default: none)")
	fl.StringArrayVar(&f.proxies, "trusted-proxy", nil, "a load balancer's address or network (10.0.0.5, 10.0.0.0/24): from it, the client's "+
		"address is the rightmost of X-Forwarded-For that is not a trusted proxy (repeatable; default: none, every connection is its own client)")
	fl.IntVar(&f.ipv6Limit, "ipv6-limit-prefix", realip.DefaultIPv6Bits, fmt.Sprintf("the per-address limits count an IPv6 client by its "+
		"network of this prefix length, as each holds a whole /64 (%d to %d; 128: each address alone); IPv4 counts each address alone",
		realip.MinIPv6Bits, realip.MaxIPv6Bits))
	fl.DurationVar(&f.shutdownTimeout, "shutdown-timeout", 120*time.Second,
		"how long a guest's graceful shutdown may take before it is given up (the server stays running)")
	fl.DurationVar(&f.stepAllowance, "step-allowance", 0, "what an operation's attempt may take beside graceful shutdowns (0: 3m)")
	_ = fl.MarkHidden("step-allowance") // for tests that kill processes mid-operation
	fl.DurationVar(&f.sweepEvery, "sweep-every", 0,
		"how often the jobs of dead processes, stranded jobs and operations without a job are looked for (0: 5s)")
	_ = fl.MarkHidden("sweep-every") // for tests that kill processes every second
	fl.StringVar(&f.metricsAddr, "metrics-addr", "", "address of a listener of its own serving Prometheus metrics at /metrics, e.g. 127.0.0.1:9090 "+
		"(default: none); plain HTTP, keep it off public networks")
	fl.StringVar(&f.metricsURL, "metrics-url", "", "a VictoriaMetrics to keep servers' load samples in, e.g. http://127.0.0.1:8428 "+
		"(default: none, the database keeps them; docs/operating.md, Metrics)")
	fl.IntVar(&f.readCache, "read-cache-servers", app.DefaultReadCacheServers, "servers the read cache holds at most (up to 100,000,000), about 800 bytes "+
		"of memory each: GET /servers/{id} of a server it holds costs no query (docs/operating.md, Memory)")
	fl.IntVar(&f.consolesPerServer, "console-sessions-per-server", ops.DefaultConsolesPerServer,
		"serial console sessions one server may have open at once, over every berthd on the database (past it: 409)")
	fl.IntVar(&f.consolesPerAccount, "console-sessions-per-account", ops.DefaultConsolesPerAccount,
		"serial console sessions one account may have open at once over all its servers (past it: 409)")
	fl.DurationVar(&f.consoleLease, "console-lease", ops.DefaultConsoleLease,
		"how long a console session of a berthd that died still counts against the caps")
	_ = fl.MarkHidden("console-lease") // for tests that kill processes holding consoles
	fl.StringVar(&f.libvirtPrefix, "libvirt-prefix", "berth-", "libvirt: prefix of the domains and volumes Berth creates")
	fl.IntVar(&f.libvirtMaxMemory, "libvirt-max-memory-mb", 0, "libvirt: cap on the memory a guest really gets, MB (0: the plan's; for small test hosts)")
	dnsFlags(fl, f)
	fl.StringVar(&f.smtpURL, "smtp-url", "", "the SMTP server mail goes through: smtp://user:password@host:port (STARTTLS when the "+
		"server offers it; port 587 by default) or smtps://... (implicit TLS; 465); user and password URL-encoded and optional "+
		"(default: $"+smtpURLEnv+", else none: each mail is written to the log instead, reset links included; docs/operating.md, Mail)")
	fl.StringVar(&f.mailFrom, "mail-from", "", "the sender of Berth's mail, e.g. 'Example Hosting <noreply@example.com>' "+
		"(default: berth@ the --public-url's host)")
	fl.StringVar(&f.supportEmail, "support-email", "", "where new support tickets and customers' messages are mailed (default: nowhere)")
	return cmd
}

// smtpURLEnv is the environment variable of --smtp-url, whose password is better not
// on a command line.
const smtpURLEnv = "BERTH_SMTP_URL"

// linkBase is where the links of mails point without --public-url: this berthd's
// own address (https under --tls-cert), never a request's Host.
func linkBase(f *serveFlags) string {
	scheme := "http"
	if f.tlsCert != "" {
		scheme = "https"
	}
	return scheme + "://" + f.addr
}

// dnsFlags are serve's DNS flags (docs/operating.md, DNS).
func dnsFlags(fl *pflag.FlagSet, f *serveFlags) {
	fl.StringVar(&f.dnsAddr, "dns-addr", "", "address to answer DNS on, UDP and TCP, e.g. 0.0.0.0:53: the customers' zones, the servers' "+
		"default names and the reverse zones of their addresses (default: none, no DNS is answered)")
	fl.StringVar(&f.dnsNameservers, "dns-nameservers", "", "the nameservers' host names, comma-separated, e.g. ns1.example.net,ns2.example.net: "+
		"every zone's NS records, the first its SOA's (default: ns1 and ns2 under --dns-default-domain)")
	fl.StringVar(&f.dnsDefaultDomain, "dns-default-domain", app.DefaultDNSDomain, "the domain of the servers' default names, "+
		"<server name>.<domain>, served forward and as their addresses' PTR")
	fl.StringArrayVar(&f.dnsAllowTransfer, "dns-allow-transfer", nil, "a network (192.0.2.53/32, 2001:db8::/64) whose secondaries may "+
		"transfer the customers' zones (AXFR over TCP; repeatable; default: none)")
	f.powerdns.add(fl)
}

// dnsConfig checks the DNS flags and turns them into the App's.
func dnsConfig(f *serveFlags) (ops.DNSOptions, app.DNSServer, error) {
	var o ops.DNSOptions
	var srv app.DNSServer
	if f.dnsAddr != "" {
		if _, _, err := net.SplitHostPort(f.dnsAddr); err != nil {
			return o, srv, fmt.Errorf("--dns-addr %q: %v", f.dnsAddr, err)
		}
		srv.Addr = f.dnsAddr
	}
	d, err := dnszone.ZoneName(f.dnsDefaultDomain)
	if err != nil {
		return o, srv, fmt.Errorf("--dns-default-domain %q: %v", f.dnsDefaultDomain, err)
	}
	o.DefaultDomain = d
	if f.dnsNameservers != "" {
		for _, ns := range strings.Split(f.dnsNameservers, ",") {
			n, err := dnszone.ZoneName(strings.TrimSpace(ns))
			if err != nil {
				return o, srv, fmt.Errorf("--dns-nameservers %q: %q: %v", f.dnsNameservers, ns, err)
			}
			o.Nameservers = append(o.Nameservers, n)
		}
	}
	for _, c := range f.dnsAllowTransfer {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return o, srv, fmt.Errorf("--dns-allow-transfer %q: %v", c, err)
		}
		srv.AllowTransfer = append(srv.AllowTransfer, p.Masked())
	}
	o.Publisher, err = f.powerdns.publisher()
	return o, srv, err
}

// errSandboxDatabase is why serve refuses --sandbox on PostgreSQL (docs/SECURITY.md):
// any token of an account may reset that account (its servers and ledger wiped, its
// credit set) and move its test clock, in a database other processes, production's
// among them, serve too; and each process would keep its own clock offsets. The
// sandbox's faults and journal live in one process's memory as well. internal/testenv
// still builds a sandbox on a throwaway PostgreSQL database in-process.
var errSandboxDatabase = errors.New("--sandbox works on a laptop's SQLite data directory (--data) only, not on PostgreSQL: " +
	"its reset wipes an account's servers and ledger and its test clock moves the account's time, in a database " +
	"that other berthd processes (production's too) share, and each process would keep clock offsets of its own")

func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func serve(ctx context.Context, g *globals, f *serveFlags) error {
	useTLS := f.tlsCert != "" || f.tlsKey != ""
	if useTLS && (f.tlsCert == "" || f.tlsKey == "") {
		return errors.New("--tls-cert and --tls-key go together")
	}
	if !useTLS && !isLoopback(f.addr) && !f.allowInsecure {
		return fmt.Errorf("refusing plain HTTP on %s: tokens would cross the network in clear; use --tls-cert/--tls-key, "+
			"or --allow-insecure-http behind a TLS-terminating proxy", f.addr)
	}
	if !(f.simTimeScale > 0) || math.IsInf(f.simTimeScale, 0) {
		return fmt.Errorf("--sim-time-scale %v: must be a number greater than 0 (1 is realistic, 0.01 a hundred times faster)", f.simTimeScale)
	}
	if f.sandbox && f.driver != "sim" {
		return fmt.Errorf("--sandbox with --driver %s: %w", f.driver, app.ErrSandboxDriver)
	}
	if f.sandbox && g.database != "" {
		// Before anything is opened: no migration, no account.
		return fmt.Errorf("--sandbox with %s: %w", f.databaseOrigin, errSandboxDatabase)
	}
	var seed fixtures.File
	if f.seed != "" {
		if !f.sandbox {
			return errors.New("--seed needs --sandbox: its fixed tokens and seeded servers are for testing a client, never for production")
		}
		var err error
		if seed, err = fixtures.Load(f.seed); err != nil {
			return fmt.Errorf("--seed %s: %w", f.seed, err)
		}
	}
	if f.rateLimit <= 0 {
		return errors.New("--rate-limit must be positive")
	}
	if f.shutdownTimeout <= 0 {
		return errors.New("--shutdown-timeout must be positive")
	}
	if f.stepAllowance < 0 {
		return errors.New("--step-allowance must not be negative")
	}
	if f.sweepEvery < 0 {
		return errors.New("--sweep-every must not be negative")
	}
	if f.consolesPerServer < 1 || f.consolesPerAccount < 1 {
		return errors.New("--console-sessions-per-server and --console-sessions-per-account must be at least 1")
	}
	if f.consoleLease < time.Second {
		return errors.New("--console-lease must be at least 1s")
	}
	if f.metricsURL != "" {
		if _, err := victoria.New(f.metricsURL); err != nil {
			return fmt.Errorf("--metrics-url: %w", err)
		}
	}
	if f.readCache < 1 || f.readCache > app.MaxReadCacheServers {
		return fmt.Errorf("--read-cache-servers %d: must be from 1 to %d", f.readCache, app.MaxReadCacheServers)
	}
	if f.metricsAddr != "" {
		if _, _, err := net.SplitHostPort(f.metricsAddr); err != nil {
			return fmt.Errorf("--metrics-addr %q: %v", f.metricsAddr, err)
		}
	}
	if f.publicURL != "" {
		u, err := httpapi.ParsePublicURL(f.publicURL)
		if err != nil {
			return fmt.Errorf("--public-url %q: %v", f.publicURL, err)
		}
		f.publicURL = u.String()
	}
	for _, o := range f.corsOrigins {
		if _, err := httpapi.ParseCORSOrigin(o); err != nil {
			return fmt.Errorf("--cors-origin %q: %v", o, err)
		}
	}
	proxies, err := realip.Parse(f.proxies)
	if err != nil {
		return fmt.Errorf("--trusted-proxy %v", err)
	}
	grouping, err := realip.NewGrouping(f.ipv6Limit)
	if err != nil {
		return fmt.Errorf("--ipv6-limit-prefix %d: %v", f.ipv6Limit, err)
	}
	dnsOpts, dnsServer, err := dnsConfig(f)
	if err != nil {
		return err
	}
	mailCfg := app.MailConfig{SMTPURL: f.smtpURL, From: f.mailFrom, Support: f.supportEmail, LinkBase: linkBase(f)}
	if err := app.CheckMailConfig(mailCfg); err != nil {
		return err
	}
	procs := app.UseSpareProcs()
	// The log goes out from a goroutine of its own, so that a request never waits on
	// stderr; a warning or an error at once. Closed last (defers run in reverse), it
	// writes every line, App.Close's too, before serve returns.
	logw := asynclog.New(os.Stderr, 0)
	defer logw.Close()
	log := asynclog.JSONLogger(logw)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	var tel *telemetry.Metrics
	if f.metricsAddr != "" {
		tel = telemetry.New(log)
	}
	a, err := g.open(ctx, app.Config{Driver: f.driver, SimTimeScale: f.simTimeScale, RateLimit: f.rateLimit, Logger: log,
		ShutdownTimeout: f.shutdownTimeout, StepAllowance: f.stepAllowance, SweepEvery: f.sweepEvery,
		Libvirt: libvirtdriver.Options{Prefix: f.libvirtPrefix, MaxMemoryMB: f.libvirtMaxMemory}, Telemetry: tel,
		PublicURL: f.publicURL, CORSOrigins: f.corsOrigins, TrustedProxies: proxies, Grouping: grouping, Sandbox: f.sandbox,
		Consoles:            ops.ConsoleCaps{PerServer: f.consolesPerServer, PerAccount: f.consolesPerAccount, Lease: f.consoleLease},
		WebhookAllowPrivate: f.webhookAllowPrivate, DNS: dnsOpts, DNSServer: dnsServer, Mail: mailCfg, MetricsURL: f.metricsURL,
		ReadCacheServers: f.readCache})
	if err != nil {
		return err
	}
	defer a.Close(context.Background())
	if err := a.StartWorkers(ctx); err != nil {
		return err
	}
	if f.seed != "" {
		// Before the first request: a client's CI may use a fixed token at once.
		res, err := fixtures.Apply(ctx, a.Service, seed)
		if err != nil {
			return fmt.Errorf("--seed %s: %w", f.seed, err)
		}
		for _, r := range res {
			log.Info("sandbox account of --seed", "email", r.Email, "account", r.AccountID, "created", r.Created)
			if r.Created {
				// The operator's start made it: the audit log says so, as for
				// `admin account create`.
				a.Service.Audit(ctx, hosting.AuditEntry{Actor: "operator", Action: "serve --seed", Client: "cli",
					AccountID: &r.AccountID, Target: "email=" + r.Email + " file=" + f.seed})
			}
		}
	}
	h, err := a.WebHandler()
	if err != nil {
		return err
	}
	stopDNS, err := a.ServeDNS()
	if err != nil {
		return err
	}
	defer stopDNS()
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return err
	}
	var metricsSrv *http.Server
	if tel != nil {
		mln, err := net.Listen("tcp", f.metricsAddr)
		if err != nil {
			ln.Close()
			return fmt.Errorf("--metrics-addr: %w", err)
		}
		metricsSrv = serveMetrics(mln, tel, log)
		defer metricsSrv.Close()
	}
	scheme := "http"
	if useTLS {
		scheme = "https"
	}
	base := scheme + "://" + ln.Addr().String() + "/v1"
	if f.publicURL != "" {
		base = f.publicURL + "/v1" // where clients reach it
	}
	if f.demo {
		_ = logw.Flush() // the lines so far come before the banner
		if err := demo(ctx, a, g.data, base); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      90 * time.Second, // ?wait holds up to 60 s
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	store := []any{"data", g.data}
	if g.database != "" {
		store = []any{"database", sqlstore.Redact(g.database)}
	}
	log.Info("serving", append([]any{"addr", ln.Addr().String(), "api", base, "console", strings.TrimSuffix(base, "v1"), "driver", f.driver,
		"cors_origins", f.corsOrigins, "trusted_proxies", f.proxies, "sandbox", f.sandbox, "gomaxprocs", procs}, store...)...)
	errc := make(chan error, 1)
	go func() {
		if useTLS {
			// HTTP/2 is negotiated by ALPN; TLS 1.2 is the oldest spoken.
			srv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
			errc <- srv.ServeTLS(ln, f.tlsCert, f.tlsKey)
		} else {
			errc <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing requests in flight; operations resume at the next start")
	a.Service.StopWaiting()
	shCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(shCtx); err != nil {
		return err
	}
	if metricsSrv != nil {
		_ = metricsSrv.Shutdown(shCtx)
	}
	if err := stopDNS(); err != nil {
		log.Warn("DNS stopped with an error", "err", err)
	}
	log.Info("stopped")
	return nil
}

// serveMetrics serves GET /metrics on a listener of its own: Prometheus's scrapes
// never reach the public port, and the public port never shows the metrics.
func serveMetrics(ln net.Listener, tel *telemetry.Metrics, log *slog.Logger) *http.Server {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", tel.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	log.Info("serving metrics", "metrics", "http://"+ln.Addr().String()+"/metrics")
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener stopped", "err", err)
		}
	}()
	return srv
}

const demoEmail = "demo@berth.local"

// demoPassword signs the demo account in to the console.
const demoPassword = "berth-demo-password"

// demo creates the demo account once and keeps its token in DATA/demo-token (the
// database keeps only its hash), so that restarts print the same token.
func demo(ctx context.Context, a *app.App, dataDir, base string) error {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return err
	}
	tokenFile := filepath.Join(dataDir, app.DemoTokenFile)
	acct, err := a.DB.AccountByEmail(ctx, demoEmail)
	if errors.Is(err, store.ErrNotFound) {
		credit, _ := hosting.ParseMoney("100")
		acct, err = a.Service.CreateAccount(ctx, ops.NewAccount{Email: demoEmail, Password: "berth-demo-password",
			Name: "Demo", Language: "en", Credit: credit})
	}
	if err != nil {
		return err
	}
	secret := ""
	if b, err := os.ReadFile(tokenFile); err == nil {
		secret = strings.TrimSpace(string(b))
		p, err := a.Service.Authenticate(ctx, secret)
		switch {
		case err != nil:
			secret = "" // revoked or from another database: issue a new one
		case slices.ContainsFunc(hosting.AllScopes, func(s hosting.Scope) bool { return !p.Token.Scopes.Has(s) }):
			// Made by a build that had fewer scopes (tickets came later): the demo's
			// token holds every scope, so it is replaced by one that does.
			if _, err := a.Service.RevokeToken(ctx, p.Token.ID); err != nil {
				return err
			}
			secret = ""
		}
	}
	if secret == "" {
		var all []string
		for _, s := range hosting.AllScopes {
			all = append(all, string(s))
		}
		_, secret, err = a.Service.CreateToken(ctx, acct.ID, "demo", strings.Join(all, ","), 0)
		if err != nil {
			return err
		}
		if err := os.WriteFile(tokenFile, []byte(secret+"\n"), 0o600); err != nil {
			return err
		}
	}
	consoleURL := strings.TrimSuffix(base, "v1")
	fmt.Fprintf(os.Stderr, "\nBerth demo\n  API:     %s\n  account: %s (password berth-demo-password)\n  token:   %s\n  (also in %s)\n",
		base, demoEmail, secret, tokenFile)
	fmt.Fprintf(os.Stderr, "  console: %s (sign in as %s, password %s)\n\n", consoleURL, demoEmail, demoPassword)
	return printJSON(map[string]any{"demo": map[string]any{"api": base, "account_id": acct.ID, "email": demoEmail,
		"token": secret, "token_file": tokenFile, "console": consoleURL, "password": demoPassword}})
}
