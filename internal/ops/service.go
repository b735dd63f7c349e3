// Package ops holds Berth's use cases: each checks the rules of the domain, writes the
// state change and, for changes to a machine, enqueues the job that carries it out in
// the same transaction. Handlers (API, console, admin commands) call only this.
package ops

import (
	"cmp"
	"context"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// Enqueuer inserts a job in a transaction (river.Client satisfies it).
type Enqueuer interface {
	InsertTx(ctx context.Context, tx *sql.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// Waker is an Enqueuer that wants to know when a transaction that enqueued jobs has
// committed, and in which queue: its workers can then take them at once instead of at
// their next poll of that queue (a job queue without notifications, like River's on
// SQLite, finds a job inserted in a transaction only by polling).
type Waker interface {
	Wake(queue string)
}

// errNoJobs is why a Service built without a job queue (Deps.Jobs) starts nothing.
var errNoJobs = errors.New("this Service has no job queue: it changes no machine")

// enqueue inserts a job in tx and, when the queue is a Waker, wakes the job's queue
// once tx has committed.
func (s *Service) enqueue(ctx context.Context, tx store.Tx, args river.JobArgs) error {
	if s.jobs == nil {
		return errNoJobs
	}
	if _, err := s.jobs.InsertTx(ctx, tx.SQL(), args, nil); err != nil {
		return err
	}
	if w, ok := s.jobs.(Waker); ok {
		queue := river.QueueDefault
		if o, ok := args.(river.JobArgsWithInsertOpts); ok {
			queue = cmp.Or(o.InsertOpts().Queue, queue)
		}
		tx.AfterCommit(func() { w.Wake(queue) })
	}
	return nil
}

// Service is Berth's core. It is built whole by New and changes nothing of itself
// afterwards.
type Service struct {
	store store.Store
	jobs  Enqueuer
	log   *slog.Logger
	now   func() time.Time

	// opWaits wakes the requests held on an operation (?wait), eventWaits those held
	// on an account's events.
	opWaits, eventWaits *wakeups

	// meterBatch is the most meter hours one metering transaction charges;
	// meterLimit, what the next one charges at most, adapted to how long the last
	// ones took (nextMeterLimit), between minMeterBatch and meterBatch.
	meterBatch    int
	meterLimit    atomic.Int64
	meterTxTarget time.Duration
	// licenseBatch is the most license months one metering transaction charges.
	licenseBatch int

	// dns is the operator's DNS settings (Deps.DNS).
	dns DNSOptions
	// publishMu keeps publishes from crossing without DNSOptions.Lock.
	publishMu sync.Mutex

	touchMu    sync.Mutex
	touched    map[int64]time.Time // when each token's last use was last recorded
	touchSweep int                 // touched forgets records over a minute old at this size
	background sync.WaitGroup      // the touches under way (Wait)

	drainOnce sync.Once
	draining  chan struct{}

	// driver runs the machines (nil: none, as for the operator's commands).
	driver compute.Driver
	// instant makes and removes machines at once (the sim driver's ability): a
	// sandbox's reset and seed need it (sandbox.go).
	instant InstantMachines
	// placer also decides whether a location has room for a plan (the libvirt
	// driver's ability: its hosts' free capacity).
	placer compute.Placer
	// reach tells that the hypervisor of a server's machine cannot be reached now:
	// operations on it then answer 503 (unavailable) instead of queuing.
	reach compute.Reachability
	// volumes: the driver keeps volumes (compute.Volumes); without it none are sold.
	volumes bool
	// faults injects the sandbox's operation faults (serve --sandbox; faults.go).
	faults OperationFaults
	// consoleCaps bound the serial console sessions open at once.
	consoleCaps ConsoleCaps
	// telemetry is told of every operation's end and every metering pass.
	telemetry Telemetry
	// backfill stores the metrics samples an account's servers would have had
	// between from and to, times on the account's clock (a test clock's advance).
	backfill BackfillFunc

	// webhooks are the rules of webhooks' urls (webhooks.go).
	webhooks WebhookOptions

	// licenseSeal seals the key pools' activation keys at rest (Deps.LicenseKey; nil:
	// none, and no key pool is in stock).
	licenseSeal cipher.AEAD

	// mail is the operator's mail settings (mail.go).
	mail MailOptions

	// clocks are the accounts' test clocks (nil: every account is on Now).
	clocks *testClocks
	// consoles are this process's open serial console sessions.
	consoles *consoleSessions
}

// Deps is what a Service is built from (New). Only Store is required.
type Deps struct {
	// Store keeps everything.
	Store store.Store
	// Jobs enqueues, in the store's transactions, the jobs that carry out operations
	// (nil: a Service that starts none, as a tool that only reads or loads a catalog).
	Jobs Enqueuer
	// Driver runs the machines (nil: none). What only some drivers can do is found on
	// it with compute.As: compute.Placer (stock), compute.Reachability, InstantMachines
	// (the sandbox's reset and seed).
	Driver compute.Driver
	// Log is where the core logs (default slog.Default()).
	Log *slog.Logger
	// Clock is the system clock (default time.Now); tests give a fake one. The store
	// keeps milliseconds: its times are truncated so.
	Clock func() time.Time
	// Faults injects the sandbox's operation faults (serve --sandbox).
	Faults OperationFaults
	// ConsoleCaps bound the serial console sessions open at once (zero fields: their
	// defaults).
	ConsoleCaps ConsoleCaps
	// Telemetry, when set, is told of every operation's end and every metering pass.
	Telemetry Telemetry
	// Backfill, when set, stores the metrics samples an account's servers would have
	// had over the time a test clock's advance skips.
	Backfill BackfillFunc
	// Webhooks are the rules of webhooks' urls (serve --webhook-allow-private, the
	// driver's address pools).
	Webhooks WebhookOptions
	// MeterBatch is the most meter hours one transaction of a metering pass charges
	// (0: DefaultMeterBatch).
	MeterBatch int
	// LicenseBatch is the most license months one transaction of a metering pass
	// charges (0: DefaultLicenseBatch).
	LicenseBatch int
	// MeterTxTarget is how long a transaction of a metering pass should take
	// (0: DefaultMeterTxTarget): each charges as many meter hours as the last ones
	// charged in that time, up to MeterBatch.
	MeterTxTarget time.Duration
	// DNS is the operator's DNS settings: the nameservers every zone shows.
	DNS DNSOptions
	// LicenseKey is the operator's key (LicenseKeySize bytes) that seals the license
	// key pools' activation keys at rest (nil: none, and no key pool is in stock;
	// docs/SECURITY.md). New fails on a key of another size.
	LicenseKey []byte
	// Mail is the operator's mail settings: the sender, the support address, the
	// base of links (zero fields: MailOptions' defaults).
	Mail MailOptions
}

// DefaultMeterBatch is how many meter hours a metering transaction charges at most,
// and PostgresMeterBatch berthd's on PostgreSQL. A transaction charges whole
// accounts (every hour due of each, derived from its meters: issue 34), and costs
// about a read of each account's meters whatever their hours, so these only bound
// a transaction that the time target (DefaultMeterTxTarget) would let grow: at
// 1,000,000 servers on a quiet 2-core machine a transaction of about 150,000 hours
// takes 0.5 s on SQLite. 20,000 (sized for a row a meter hour) made a 5-hour
// catch-up 250 transactions there and took twice as long as 200,000 (6.1 s against
// 3.3 s; bench/metering.sh, 2026-11-30).
const (
	DefaultMeterBatch  = 200_000
	PostgresMeterBatch = 200_000
)

// DefaultLicenseBatch is how many license months a metering transaction charges at
// most, and PostgresLicenseBatch berthd's on PostgreSQL: the license step writes a
// ledger row for each, so a month costs what a meter hour did before metering was
// derived: 20,000 took about 0.3 s of SQLite's one writer on a quiet 2-core machine,
// 10,000 0.4-0.8 s of PostgreSQL (bench/metering.sh, 2026-11-28).
const (
	DefaultLicenseBatch  = 20_000
	PostgresLicenseBatch = 10_000
)

// DefaultMeterTxTarget is how long a metering transaction should hold the database
// at most: the batches above take about that on a small machine at 100,000 meters,
// but an hour costs more as the ledger and its indexes grow (at 1,000,000 servers
// and volumes a 20,000-hour transaction of SQLite's took up to 1.3 s,
// bench/metering.sh on 2026-11-28), and more on a machine busy with other work. So
// a pass charges fewer hours a transaction when they took longer than this
// (nextMeterLimit), and API writes behind it keep waiting for less than a second
// whatever the installation's size. minMeterBatch (or an eighth of the batch, if
// more) is the fewest it charges but for the last, so that a stalled database does
// not make a pass a commit per hour.
const (
	DefaultMeterTxTarget = 500 * time.Millisecond
	minMeterBatch        = 500
)

// BackfillFunc stores the metrics samples an account's servers would have had
// between from and to, times on the account's clock.
type BackfillFunc func(ctx context.Context, accountID int64, from, to time.Time) error

// Telemetry is what the core tells operators' metrics (internal/telemetry implements
// it). It only counts: nothing it does changes what the core decides.
type Telemetry interface {
	// OperationFinished: an operation ended with result, took after it was accepted.
	OperationFinished(typ hosting.OpType, result hosting.OpStatus, took time.Duration)
	// MeterPassed: a metering pass took took and failed with err (nil: it did not).
	MeterPassed(took time.Duration, err error)
	// DNSPublished: a publishing job's publish to PowerDNS failed with err (nil: it
	// did not).
	DNSPublished(err error)
}

// New returns the Service d describes.
func New(d Deps) *Service {
	if d.Log == nil {
		d.Log = slog.Default()
	}
	clock := d.Clock
	if clock == nil {
		clock = time.Now
	}
	s := &Service{store: d.Store, jobs: d.Jobs, log: d.Log, now: func() time.Time { return clock().UTC().Truncate(time.Millisecond) },
		opWaits: newWakeups(), eventWaits: newWakeups(), touched: map[int64]time.Time{}, touchSweep: touchSweepMin, draining: make(chan struct{}),
		driver: d.Driver, faults: d.Faults, consoleCaps: d.ConsoleCaps.withDefaults(), telemetry: d.Telemetry, backfill: d.Backfill, webhooks: d.Webhooks,
		dns: d.DNS, mail: d.Mail.withDefaults(),
		consoles: newConsoleSessions(), meterBatch: d.MeterBatch}
	if s.meterBatch <= 0 {
		s.meterBatch = DefaultMeterBatch
	}
	s.licenseBatch = d.LicenseBatch
	if s.licenseBatch <= 0 {
		s.licenseBatch = DefaultLicenseBatch
	}
	s.meterTxTarget = d.MeterTxTarget
	if s.meterTxTarget <= 0 {
		s.meterTxTarget = DefaultMeterTxTarget
	}
	// The first transaction charges half the most: at a size where that takes too
	// long, it takes half as long as the most would.
	s.meterLimit.Store(int64(max(min(minMeterBatch, s.meterBatch), s.meterBatch/2)))
	s.instant, _ = compute.As[InstantMachines](d.Driver)
	s.placer, _ = compute.As[compute.Placer](d.Driver)
	s.reach, _ = compute.As[compute.Reachability](d.Driver)
	_, s.volumes = compute.As[compute.Volumes](d.Driver)
	seal, err := newLicenseSeal(d.LicenseKey)
	if err != nil {
		panic("ops: " + err.Error()) // the caller reads the key with ReadLicenseKey, which checks its size
	}
	s.licenseSeal = seal
	return s
}

// Now is the system clock's time, as the store keeps it (whole milliseconds, UTC).
// An account's records take theirs from NowFor.
func (s *Service) Now() time.Time { return s.now() }

// StopWaiting ends every wait on an operation at once (each answers the operation as
// it stands) and every later one immediately: a shutting-down server finishes its
// requests in flight without holding them for their full ?wait.
func (s *Service) StopWaiting() { s.drainOnce.Do(func() { close(s.draining) }) }

// internal wraps an unexpected error with context; the edge shows it as "internal".
func internal(what string, err error) error {
	if err == nil {
		return nil
	}
	var he *hosting.Error
	if errors.As(err, &he) {
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}

// ---- tokens and authentication ----

// TokenPrefix starts every API token, so that secret scanners can spot leaked ones.
const TokenPrefix = "berth_"

// NewTokenSecret returns a fresh token (256 random bits) and the hash to store.
func NewTokenSecret() (secret string, hash []byte) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	secret = TokenPrefix + base64.RawURLEncoding.EncodeToString(b)
	return secret, HashToken(secret)
}

// HashToken is how a token is stored and looked up.
func HashToken(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// Authenticate resolves a bearer token to its principal. It answers
// CodeUnauthenticated for a missing, malformed, unknown, revoked or expired token.
// A blocked account still authenticates: what it may do is the caller's to decide.
func (s *Service) Authenticate(ctx context.Context, secret string) (hosting.Principal, error) {
	if !strings.HasPrefix(secret, TokenPrefix) || len(secret) > 200 {
		return hosting.Principal{}, hosting.Errorf(hosting.CodeUnauthenticated, "error.unauthenticated")
	}
	t, a, err := s.store.TokenByHash(ctx, HashToken(secret))
	if errors.Is(err, store.ErrNotFound) {
		return hosting.Principal{}, hosting.Errorf(hosting.CodeUnauthenticated, "error.unauthenticated")
	}
	if err != nil {
		return hosting.Principal{}, internal("token lookup", err)
	}
	now := s.Now()
	if !t.Usable(now) {
		return hosting.Principal{}, hosting.Errorf(hosting.CodeUnauthenticated, "error.unauthenticated")
	}
	s.touch(t, now)
	return hosting.Principal{Account: a, Token: t}, nil
}

// touchDue tells whether a token's use at now is to be recorded (its last was
// recorded over a minute ago, or never by this process) and notes it. Records over a
// minute old are forgotten once the map has doubled since the last sweep, so it holds
// about the tokens used in the last minute, not every token ever used.
func (s *Service) touchDue(id int64, now time.Time) bool {
	s.touchMu.Lock()
	defer s.touchMu.Unlock()
	if last, ok := s.touched[id]; ok && now.Sub(last) < time.Minute {
		return false
	}
	s.touched[id] = now
	if len(s.touched) >= s.touchSweep {
		for id, last := range s.touched {
			if now.Sub(last) >= time.Minute {
				delete(s.touched, id)
			}
		}
		s.touchSweep = max(touchSweepMin, 2*len(s.touched))
	}
	return true
}

// touchSweepMin is the smallest size at which touched is swept.
const touchSweepMin = 1024

// touch records a token's last use, at most once a minute per token, off the request path.
func (s *Service) touch(t hosting.Token, now time.Time) {
	if t.LastUsedAt != nil && now.Sub(*t.LastUsedAt) < time.Minute {
		return
	}
	if !s.touchDue(t.ID, now) {
		return
	}
	s.background.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.store.InTx(ctx, func(tx store.Tx) error { return tx.TouchToken(ctx, t.ID, now) }); err != nil {
			s.log.Warn("token last-used not recorded", "token", t.ID, "err", err)
		}
	})
}

// Wait waits for the writes the service started off the request path (a token's
// last use): the store must stay open until they end.
func (s *Service) Wait() { s.background.Wait() }

// ---- catalog ----

// LocationOffer is a location with, for each plan, whether it is in stock.
type LocationOffer struct {
	hosting.Location
	InStock map[int64]bool
}

// Locations lists every orderable location with its plans and images.
func (s *Service) Locations(ctx context.Context) ([]LocationOffer, error) {
	ls, err := s.store.Locations(ctx)
	if err != nil {
		return nil, internal("locations", err)
	}
	out := make([]LocationOffer, len(ls))
	for i, l := range ls {
		out[i] = LocationOffer{Location: l, InStock: map[int64]bool{}}
		for _, p := range l.Plans {
			ok, err := s.inStock(ctx, s.store, l.ID, p)
			if err != nil {
				return nil, err
			}
			out[i].InStock[p.ID] = ok
		}
	}
	return out, nil
}

// inStock reports whether a location has room for one more server of plan p.
func (s *Service) inStock(ctx context.Context, r store.Reader, locationID int64, p hosting.Plan) (bool, error) {
	if s.placer != nil {
		if ok, err := s.placer.HasRoom(ctx, locationID, p.VCPUs, p.MemoryMB, p.DiskGB); err != nil || !ok {
			return false, internal("capacity", err)
		}
	}
	if p.Capacity == nil {
		return true, nil
	}
	n, err := r.ServersOfPlan(ctx, locationID, p.ID)
	if err != nil {
		return false, internal("capacity", err)
	}
	return n < *p.Capacity, nil
}

// Apps lists the one-click applications.
func (s *Service) Apps(ctx context.Context) ([]hosting.App, error) {
	a, err := s.store.Apps(ctx)
	return a, internal("apps", err)
}

// ---- operations ----

// Operation returns an operation of the principal's account. With wait > 0 it holds
// until the operation ends or wait passes, whichever comes first.
func (s *Service) Operation(ctx context.Context, p hosting.Principal, id int64, wait time.Duration) (hosting.Operation, error) {
	deadline := time.Now().Add(wait)
	for {
		ch := s.opWaits.subscribe(id)
		op, err := s.store.Operation(ctx, p.Account.ID, id)
		if errors.Is(err, store.ErrNotFound) {
			s.opWaits.unsubscribe(id, ch)
			return op, hosting.ErrNotFound()
		}
		if err != nil || op.Status != hosting.OpRunning || wait <= 0 {
			s.opWaits.unsubscribe(id, ch)
			return op, internal("operation", err)
		}
		left := time.Until(deadline)
		if left <= 0 {
			s.opWaits.unsubscribe(id, ch)
			return op, nil
		}
		// Woken by this process's worker at once, or when another process runs the
		// job by its notification (OperationEnded); polling is what is left when
		// that is lost.
		woke := s.sleepUnless(ctx, ch, min(left, 250*time.Millisecond))
		s.opWaits.unsubscribe(id, ch)
		if !woke {
			return op, nil
		}
	}
}

// OperationEnded wakes whoever waits on operation id in this process: another
// process ran it and says it ended (PostgreSQL's LISTEN/NOTIFY).
func (s *Service) OperationEnded(id int64) { s.notify(id) }

// notify wakes everyone waiting on an operation.
func (s *Service) notify(id int64) { s.opWaits.notify(id) }
