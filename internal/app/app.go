// Package app wires Berth together: store, core, job queue, compute driver and the
// HTTP handler. cmd/berthd and the test environment both build on it.
package app

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivertype"

	"github.com/berthhq/berth/internal/catalog"
	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/compute/libvirtdriver"
	"github.com/berthhq/berth/internal/httpapi"
	"github.com/berthhq/berth/internal/i18n"
	"github.com/berthhq/berth/internal/metrics"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/realip"
	"github.com/berthhq/berth/internal/sandbox"
	"github.com/berthhq/berth/internal/store/sqlstore"
	"github.com/berthhq/berth/internal/telemetry"
	"github.com/berthhq/berth/internal/webhook"
	"github.com/berthhq/berth/internal/webui"
	"github.com/berthhq/berth/internal/worker"
)

// Config is how berthd is run.
type Config struct {
	DataDir string // SQLite database directory
	// LicenseKeyFile is the operator's key that seals the license key pools' keys
	// (--license-key-file; default: the data dir's LicenseKeyFile, made when absent).
	LicenseKeyFile string
	// DatabaseURL, when set, is the PostgreSQL database (postgres://...) to use
	// instead of DataDir: several processes may serve it together.
	DatabaseURL  string
	Driver       string  // a name of DriverNames (default "sim")
	SimTimeScale float64 // sim durations factor; 1 is realistic
	RateLimit    int     // requests per minute per token (default 120)
	Logger       *slog.Logger
	// RateWindow is the rate limits' rolling window (default 1 minute; tests only).
	RateWindow time.Duration
	// ShutdownTimeout bounds a graceful guest shutdown (default 120 s).
	ShutdownTimeout time.Duration
	// FetchPoll is how often the job queue looks for new work (default 100 ms).
	FetchPoll time.Duration
	// Clock is what billing and every record read the time from (default: the
	// system clock); tests run a month in milliseconds with a fake one.
	Clock func() time.Time
	// MeterEvery is how often a metering pass runs (default 1 min). A pass charges
	// every hour started since the last, so the interval only bounds the delay.
	MeterEvery time.Duration
	// MetricsURL, when set, is a VictoriaMetrics (http://host:port) that keeps the
	// servers' metrics samples instead of the database (docs/operating.md, Metrics).
	MetricsURL string
	// ReadCacheServers bounds the servers the store's read cache holds (0: the
	// store's default, 100,000; docs/operating.md, Memory).
	ReadCacheServers int
	// WrapDriver, when set, wraps the compute driver (tests inject faults with it):
	// operations call the wrapper, and what only some drivers can do (compute.As) is
	// found on the driver it wraps.
	WrapDriver func(compute.Driver) compute.Driver
	// WrapBackfill, when set, wraps the metrics backfill of a test clock's advance
	// (tests hold an advance in it).
	WrapBackfill func(ops.BackfillFunc) ops.BackfillFunc
	// Libvirt tunes the libvirt driver (--driver libvirt).
	Libvirt libvirtdriver.Options
	// ReconcileEvery is how often the libvirt driver's machines are compared with
	// their servers' statuses (default 5 s).
	ReconcileEvery time.Duration
	// SweepEvery is how often stranded jobs and operations without a job are looked
	// for (default 5 s; see rescue.go).
	SweepEvery time.Duration
	// Create says whether Open may create a database (default: only in a new or
	// empty directory).
	Create Create
	// StepAllowance is what an operation's attempt may take beside its graceful
	// shutdowns (default 3 min; see worker.Worker.AttemptTimeout). With the sim driver
	// it is scaled like the driver's durations.
	StepAllowance time.Duration
	// Telemetry collects the operators' metrics (nil: none are). An App watches its
	// store on it from Open to Close, and its libvirt hosts once its workers run.
	Telemetry *telemetry.Metrics
	// PublicURL is the address clients reach the service at behind a proxy, /v1 left
	// out (serve --public-url): the API's absolute links start with it (default: the
	// request's own scheme and Host). httpapi.ParsePublicURL says what it may be.
	PublicURL string
	// CORSOrigins are the browser origins whose scripts may call the API (serve
	// --cors-origin; none by default). httpapi.ParseCORSOrigin says what each may be.
	CORSOrigins []string
	// TrustedProxies are the load balancers whose X-Forwarded-For gives a request's
	// client address (serve --trusted-proxy; none by default): the per-address
	// limits, the sign-in throttle and the audit log then see each client.
	TrustedProxies realip.Proxies
	// Grouping says which client addresses count as one for those per-address limits
	// (serve --ipv6-limit-prefix; the zero Grouping counts an IPv6 client by its /64).
	Grouping realip.Grouping
	// Sandbox turns on the sandbox API for client authors (serve --sandbox,
	// docs/api.md, The sandbox): /sandbox/v1 is served, faults are injected. It works with
	// the sim driver only.
	Sandbox bool
	// Consoles caps the serial console sessions open at once, per server and per
	// account, over every process on the database (serve --console-sessions-per-server,
	// --console-sessions-per-account; zero fields: ops' defaults).
	Consoles ops.ConsoleCaps
	// WebhookAllowPrivate lets webhooks deliver to private addresses and over plain
	// http (serve --webhook-allow-private; always under Sandbox).
	WebhookAllowPrivate bool
	// Webhook tunes the webhook deliveries' client: its Timeout, Resolver and Dial
	// (tests; zero: production's). Its AllowPrivate and OwnPools are set from the above.
	Webhook webhook.Options
	// DNS is the operator's DNS (serve --dns-nameservers, --dns-default-domain;
	// zero fields: DefaultDNSDomain and its ns1 and ns2), and the nameserver every
	// change is published to (serve --powerdns-url; nil Publisher: none), each
	// publish under the App's lock of the zone unless DNS.Lock is set.
	DNS ops.DNSOptions
	// DNSServer is where berthd answers DNS itself (serve --dns-addr; dns.go).
	DNSServer DNSServer
	// Mail is how mail is sent (serve --smtp-url, --mail-from, --support-email;
	// mail.go).
	Mail MailConfig
	// MailFromStore takes Mail's From, Support and link base from what serve recorded
	// in the store (mail.go), for the admin commands, which run without serve's flags.
	MailFromStore bool
}

// DefaultDNSDomain is the default domain of an installation that names none (serve
// --dns-default-domain): names under .localhost never leave a machine (RFC 6761), as
// a laptop's sandbox wants; an operator selling DNS names their own.
const DefaultDNSDomain = "berth.localhost"

// dnsOptions are o with its defaults: the default domain, and ns1 and ns2 under it
// as the nameservers.
func dnsOptions(o ops.DNSOptions) ops.DNSOptions {
	if o.DefaultDomain == "" {
		o.DefaultDomain = DefaultDNSDomain
	}
	if len(o.Nameservers) == 0 {
		o.Nameservers = []string{"ns1." + o.DefaultDomain, "ns2." + o.DefaultDomain}
	}
	return o
}

// ErrSandboxDriver is why Open refuses a sandbox on another driver than sim.
var ErrSandboxDriver = errors.New("--sandbox works with --driver sim only: a sandbox injects faults and moves clocks, " +
	"which real machines under --driver libvirt would not follow")

// DefaultReadCacheServers is the servers the store's read cache holds by default
// (Config.ReadCacheServers).
const DefaultReadCacheServers = sqlstore.DefaultReadCacheServers

// MaxReadCacheServers is the most Config.ReadCacheServers may be (about 80 GB).
const MaxReadCacheServers = sqlstore.MaxReadCacheServers

// App is a wired Berth.
type App struct {
	cfg     Config
	DB      *sqlstore.DB
	Service *ops.Service
	// jobs inserts jobs in the store's transactions; on SQLite, once StartWorkers
	// ran, it also works them.
	jobs *river.Client[*sql.Tx]
	// queue is what the core enqueues with: it goes through jobs, and wakes the
	// workers once they run (wake.go).
	queue *jobQueue
	// work is the client working jobs (after StartWorkers): jobs on SQLite, a client
	// on River's pgx driver (LISTEN/NOTIFY) on PostgreSQL.
	work jobWorker
	// lead says whether this process does the cluster's periodic work now.
	lead *leader
	// base is the compute driver of Config.Driver; driver is what operations call:
	// base, or what Config.WrapDriver made of it.
	base, driver compute.Driver
	lock         *os.File
	log          *slog.Logger

	// metrics keeps the metrics samples when not the SQL store (Config.MetricsURL).
	metrics metrics.Backend
	// stopSampler stops the metrics sampler (after StartWorkers).
	stopSampler func()
	// stopReconcile stops the power reconcile loop (libvirt).
	stopReconcile func()
	// stopHosts stops the start's connections to the libvirt hosts.
	stopHosts func()
	// stopWaker stops the goroutine that wakes the job queue (after StartWorkers).
	stopWaker func()
	// stopSweep stops the sweep of stranded jobs (after StartWorkers).
	stopSweep func()
	// working knows the jobs this process works.
	working *workingJobs
	// closePool closes the pgx pool of the PostgreSQL workers.
	closePool func()
	// live holds this process's liveness lock (PostgreSQL; liveness.go).
	live *liveness
	// dead is what the sweep knows of processes that died.
	dead deadWorkers
	// unwatch removes the scrape-time series of this App's store and hosts.
	unwatch []func()
	// Sandbox is the sandbox's state (Config.Sandbox; nil without it).
	Sandbox *sandbox.State
}

// Open opens the store, migrates it, loads the default catalog on first start and
// returns an App whose job client can enqueue (admin commands) but not yet work.
func Open(ctx context.Context, cfg Config) (*App, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewJSONHandler(os.Stderr, nil))
	}
	if cfg.DataDir == "" && cfg.DatabaseURL == "" {
		return nil, errors.New("no data directory (--data)")
	}
	if cfg.Sandbox && cfg.Driver != "" && cfg.Driver != "sim" {
		return nil, ErrSandboxDriver
	}
	if cfg.SimTimeScale <= 0 {
		cfg.SimTimeScale = 1
	}
	if cfg.FetchPoll <= 0 {
		cfg.FetchPoll = 100 * time.Millisecond
	}
	db, err := openStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if cfg.ReadCacheServers > 0 {
		db.SetReadCacheServers(cfg.ReadCacheServers)
	}
	if cfg.MailFromStore {
		if err := mailFromStore(ctx, db, &cfg); err != nil {
			db.Close()
			return nil, err
		}
	}
	a := &App{cfg: cfg, DB: db, log: cfg.Logger, queue: newJobQueue(cfg.Logger)}
	if err := a.openMetrics(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if err := a.openDriver(); err != nil {
		db.Close()
		return nil, err
	}
	licKey, err := licenseKey(cfg.LicenseKeyFile, cfg.DataDir)
	if err != nil {
		db.Close()
		return nil, err
	}
	deps := ops.Deps{Store: db, Jobs: a.queue, Driver: a.driver, Log: cfg.Logger, Clock: cfg.Clock,
		ConsoleCaps: cfg.Consoles, Webhooks: a.webhookOptions(), DNS: dnsOptions(cfg.DNS), LicenseKey: licKey, Mail: a.mailOptions()}
	if deps.DNS.Publisher != nil && deps.DNS.Lock == nil {
		deps.DNS.Lock = a.zoneLock
	}
	if db.Postgres() {
		deps.MeterBatch, deps.LicenseBatch = ops.PostgresMeterBatch, ops.PostgresLicenseBatch
	}
	if cfg.Telemetry != nil {
		deps.Telemetry = cfg.Telemetry
	}
	if cfg.Sandbox {
		a.Sandbox = sandbox.New()
		deps.Faults = a.Sandbox
		deps.Backfill = a.backfill
		if cfg.WrapBackfill != nil {
			deps.Backfill = cfg.WrapBackfill(deps.Backfill)
		}
	}
	a.Service = ops.New(deps)
	if cfg.Sandbox {
		// Every account gets a test clock: its records' times, its charges and its
		// servers' metrics follow it.
		if err := a.Service.EnableTestClocks(ctx); err != nil {
			db.Close()
			return nil, err
		}
	}
	jobs, err := river.NewClient(a.sqlDriver(), &river.Config{Logger: quiet(cfg.Logger)})
	if err != nil {
		db.Close()
		return nil, err
	}
	a.jobs = jobs
	a.queue.use(jobs)
	if err := a.Service.EnsureCatalog(ctx, catalog.Default()); err != nil {
		db.Close()
		return nil, fmt.Errorf("default catalog: %w", err)
	}
	if cfg.Telemetry != nil {
		unwatch, err := cfg.Telemetry.WatchStore(db, a.Service.Now)
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("metrics: %w", err)
		}
		a.unwatch = append(a.unwatch, unwatch)
	}
	return a, nil
}

// quiet keeps River's own logs to warnings and errors, each message at most once in
// repeatWindow (with the count of those held back).
func quiet(l *slog.Logger) *slog.Logger {
	return slog.New(newRepeats(levelFilter{l.Handler(), slog.LevelWarn}, repeatWindow, time.Now))
}

type levelFilter struct {
	slog.Handler
	min slog.Level
}

func (f levelFilter) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= f.min && f.Handler.Enabled(ctx, l)
}

// Handle drops what River logs of work a stop cancelled (its error "context
// canceled"): a job cut short by a stop is retried at the next start, and a stop
// is no alarm (issue 33).
func (f levelFilter) Handle(ctx context.Context, rec slog.Record) error {
	cancelled := false
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == "err" || a.Key == "error" {
			cancelled = a.Value.String() == context.Canceled.Error()
		}
		return !cancelled
	})
	if cancelled {
		return nil
	}
	return f.Handler.Handle(ctx, rec)
}

// StartWorkers makes this process the one that carries out operations: it takes the
// data directory's lock (SQLite serves from one process), hands every job a previous
// process left running back to the queue, and starts working.
func (a *App) StartWorkers(ctx context.Context) error {
	if !a.DB.Postgres() {
		if err := a.takeLock(); err != nil {
			return err
		}
	}
	if h, ok := compute.As[compute.Hosted](a.driver); ok {
		a.prepareHosts(h)
		if err := a.watchHosts(h); err != nil {
			return err
		}
	}
	w := worker.New(worker.Deps{Service: a.Service, Store: a.DB, Driver: a.driver, Complete: a.completeTx(), Log: a.log,
		ShutdownTimeout: a.cfg.ShutdownTimeout, StepAllowance: a.cfg.StepAllowance})
	workers := river.NewWorkers()
	if err := w.Register(workers); err != nil {
		return err
	}
	if err := river.AddWorkerSafely(workers, ops.NewWebhookDeliveryWorker(a.Service, a.cfg.Webhook)); err != nil {
		return err
	}
	if err := river.AddWorkerSafely(workers, ops.NewLicenseHookWorker(a.Service, a.cfg.Webhook)); err != nil {
		return err
	}
	if err := river.AddWorkerSafely(workers, ops.NewDNSPublishWorker(a.Service)); err != nil {
		return err
	}
	sender, err := a.mailSender()
	if err != nil {
		return err
	}
	if err := a.recordMail(ctx); err != nil {
		return err
	}
	if err := river.AddWorkerSafely(workers, ops.NewMailWorker(a.Service, sender, ops.MailJobs{
		Complete: completeJobTx[ops.MailArgs](a.DB.Postgres()), Ending: mailEndingTx(a.DB.Postgres())})); err != nil {
		return err
	}
	if err := river.AddWorkerSafely(workers, wakeWorker{}); err != nil {
		return err
	}
	meterEvery := a.cfg.MeterEvery
	if meterEvery <= 0 {
		meterEvery = time.Minute
	}
	if !a.DB.Postgres() {
		// Only this process works the database's jobs: whatever a previous one left
		// running was cut off. On PostgreSQL other processes may be working theirs;
		// River's rescuer hands back those of a process that died.
		if err := a.requeueOrphans(ctx); err != nil {
			return fmt.Errorf("requeue jobs of a previous run: %w", err)
		}
	}
	a.working = newWorkingJobs()
	a.lead = newLeader(a.DB)
	queues := map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 200}, ops.DNSQueue: {MaxWorkers: dnsPublishWorkers},
		ops.MailQueue: {MaxWorkers: mailWorkers}}
	cfg := &river.Config{
		Logger:            quiet(a.log),
		Middleware:        []rivertype.Middleware{a.working},
		Workers:           workers,
		Queues:            queues,
		FetchPollInterval: a.cfg.FetchPoll,
		FetchCooldown:     min(a.cfg.FetchPoll, 20*time.Millisecond),
		JobTimeout:        -1,
		RetryPolicy:       &retryPolicy{},
		// An operation's attempt is cut off after w.AttemptTimeout(); a job still
		// running past that is stuck (its end was never recorded) and retried. The
		// sweep (rescue.go) finds those of this process sooner.
		RescueStuckJobsAfter: w.AttemptTimeout() + a.rescueMargin(),
		// Metering runs on the elected leader: once, however many processes serve.
		PeriodicJobs: []*river.PeriodicJob{
			river.NewPeriodicJob(river.PeriodicInterval(meterEvery),
				func() (river.JobArgs, *river.InsertOpts) { return ops.MeterArgs{}, nil },
				&river.PeriodicJobOpts{RunOnStart: true}),
			river.NewPeriodicJob(river.PeriodicInterval(time.Hour),
				func() (river.JobArgs, *river.InsertOpts) { return ops.HousekeepingArgs{}, nil },
				&river.PeriodicJobOpts{RunOnStart: true}),
		},
	}
	if a.DB.Postgres() {
		cfg.ID = clientID()
		live, err := startLiveness(ctx, a.DB.WriteDB(), cfg.ID)
		if err != nil {
			return err
		}
		a.live = live
		// Jobs are inserted by a.jobs in the store's transactions, which notifies
		// the workers of every process (LISTEN/NOTIFY) when they commit.
		work, err := a.startPostgresWorkers(ctx, cfg)
		if err != nil {
			return err
		}
		a.work = work
		// River notifies the other processes of inserted jobs, but at most so often
		// per queue: this process is woken as on SQLite, by a wake job its working
		// client inserts once the transaction has committed.
		a.stopWaker = a.queue.start(func(ctx context.Context, wakes []river.InsertManyParams) error {
			_, err := work.InsertMany(ctx, wakes)
			return err
		})
	} else {
		jobs, err := river.NewClient(a.sqlDriver(), cfg)
		if err != nil {
			return err
		}
		a.jobs, a.work = jobs, jobs
		a.queue.use(jobs)
		if err := jobs.Start(ctx); err != nil {
			return err
		}
		a.stopWaker = a.queue.start(func(ctx context.Context, wakes []river.InsertManyParams) error {
			_, err := jobs.InsertMany(ctx, wakes)
			return err
		})
	}
	a.startSweep()
	a.startSampler()
	if _, ok := compute.As[compute.Hosted](a.driver); ok {
		a.startReconcile()
	}
	return nil
}

// requeueOrphans makes jobs that were running when a previous process died available
// again. It is safe only because the lock guarantees no other process works them.
func (a *App) requeueOrphans(ctx context.Context) error {
	exec := riversqlite.New(a.DB.WriteDB()).GetExecutor()
	stuck, err := exec.JobGetStuck(ctx, &riverdriver.JobGetStuckParams{Max: 10000, StuckHorizon: time.Now().Add(time.Hour)})
	if err != nil || len(stuck) == 0 {
		return err
	}
	err = rescueJobs(ctx, exec, stuck, "berthd stopped while the job ran; resumed at restart")
	if err == nil {
		a.log.Info("resumed operations of a previous run", "jobs", len(stuck))
	}
	return err
}

// rescueJobs makes jobs available to run again at once, recording why as the error of
// the attempt they were in.
func rescueJobs(ctx context.Context, exec riverdriver.Executor, jobs []*rivertype.JobRow, why string) error {
	p := &riverdriver.JobRescueManyParams{}
	now := time.Now().UTC()
	for _, j := range jobs {
		e, _ := json.Marshal(rivertype.AttemptError{At: now, Attempt: j.Attempt, Error: why})
		p.ID = append(p.ID, j.ID)
		p.Error = append(p.Error, e)
		p.FinalizedAt = append(p.FinalizedAt, nil)
		p.ScheduledAt = append(p.ScheduledAt, now)
		p.State = append(p.State, string(rivertype.JobStateAvailable))
	}
	_, err := exec.JobRescueMany(ctx, p)
	return err
}

// every runs fn every d in a goroutine of its own until the returned stop is called.
func every(d time.Duration, fn func(ctx context.Context)) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			fn(ctx)
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

func (a *App) takeLock() error {
	f, err := os.OpenFile(filepath.Join(a.cfg.DataDir, LockFile), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return fmt.Errorf("another berthd serves %s already", a.cfg.DataDir)
	}
	a.lock = f
	return nil
}

// Handler returns the /v1 API handler.
func (a *App) Handler() (*httpapi.Server, error) {
	cat, err := i18n.Load()
	if err != nil {
		return nil, err
	}
	cfg := httpapi.Config{RateLimit: a.cfg.RateLimit, RateWindow: a.cfg.RateWindow, Metrics: a.metricsReader(), Limits: a.limits(),
		Grouping: a.cfg.Grouping, PublicURL: a.cfg.PublicURL, CORSOrigins: a.cfg.CORSOrigins, Sandbox: a.Sandbox}
	if a.cfg.Telemetry != nil {
		cfg.Telemetry = a.cfg.Telemetry
	}
	return httpapi.New(a.Service.Services(), cat, a.log, cfg)
}

// Driver is the compute driver operations call.
func (a *App) Driver() compute.Driver { return a.driver }

// Close ends the open serial consoles, stops the workers (jobs in flight are left to
// resume at the next start) and closes the store.
func (a *App) Close(ctx context.Context) error {
	// Open serial consoles first, while the store and the driver still serve their
	// connections' last steps: their clients are told berthd stops, their places
	// under the caps are freed at once rather than when their leases run out.
	endCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	a.Service.EndConsoles(endCtx)
	cancel()
	for _, unwatch := range a.unwatch {
		unwatch()
	}
	a.unwatch = nil
	if a.stopSampler != nil {
		a.stopSampler()
	}
	if a.stopReconcile != nil {
		a.stopReconcile()
	}
	if a.stopHosts != nil {
		a.stopHosts()
	}
	if a.stopWaker != nil {
		a.stopWaker()
	}
	if a.stopSweep != nil {
		a.stopSweep()
	}
	if a.work != nil {
		stopCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if err := a.work.Stop(stopCtx); err != nil {
			_ = a.work.StopAndCancel(context.Background())
		}
		cancel()
	}
	if a.closePool != nil {
		a.closePool()
	}
	a.live.close()
	a.lead.close()
	a.Service.Wait()
	err := a.DB.Close()
	if a.lock != nil {
		a.lock.Close()
	}
	return err
}

// WebHandler is what berthd serves on its one port: the /v1 API (and the sandbox
// API under /sandbox/v1, which answers 404 without Config.Sandbox), the probes
// /healthz and /readyz (health.go), and the console (the account holder's web
// interface) at every other path. With Config.Telemetry the API's and the console's
// requests are counted by route.
func (a *App) WebHandler() (http.Handler, error) {
	apiServer, err := a.Handler()
	if err != nil {
		return nil, err
	}
	cat, err := i18n.Load()
	if err != nil {
		return nil, err
	}
	ccfg := webui.Config{Metrics: a.metricsReader(), Limits: a.limits(), Grouping: a.cfg.Grouping, ConsoleURL: apiServer.ConsoleURL}
	if a.cfg.Telemetry != nil {
		ccfg.Telemetry = a.cfg.Telemetry
	}
	con, err := webui.New(a.Service.Services(), cat, a.log, ccfg)
	if err != nil {
		return nil, err
	}
	tel := a.cfg.Telemetry
	api, web := tel.Instrument(telemetry.SurfaceAPI, apiServer), tel.Instrument(telemetry.SurfaceConsole, con)
	probes := &health{st: a.DB, log: a.log}
	return a.cfg.TrustedProxies.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case p == "/v1" || strings.HasPrefix(p, "/v1/"), p == httpapi.SandboxBase || strings.HasPrefix(p, httpapi.SandboxBase+"/"):
			api.ServeHTTP(w, r)
		case p == HealthzPath || p == ReadyzPath:
			probes.ServeHTTP(w, r)
		default:
			web.ServeHTTP(w, r)
		}
	})), nil
}
