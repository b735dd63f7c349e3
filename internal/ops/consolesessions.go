package ops

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// Serial console sessions are capped per server and per account (issue 26;
// docs/SECURITY.md, API4): each open session costs the process a connection to the
// hypervisor and a few goroutines for as long as its client answers pings. A ticket
// is refused when the cap is reached (an early answer, which reserves nothing), and
// so is a connection that presents one then: the place is taken when the connection
// opens, in the transaction that counts the others.
//
// The count holds for every berthd on the database: each session is a row of the
// store that holds its place until its lease runs out. The process serving it renews
// the leases of all its sessions every Lease/3 and deletes a session's row when it
// ends, whatever ends it (its client, the server stopping, deleted or suspended, a
// ping unanswered, the process stopping: EndConsoles). A process that dies renews
// nothing, and its sessions stop counting within a lease.

// ConsoleCaps bound the serial console sessions open at once.
type ConsoleCaps struct {
	// PerServer is how many sessions one server may have open (0: 4).
	PerServer int
	// PerAccount is how many one account may have open over all its servers (0: 20).
	PerAccount int
	// Lease is how long a session holds its place unless its process renews it
	// (0: 30 s): the longest the sessions of a process that died count.
	Lease time.Duration
}

// The caps when none are set (serve's defaults).
const (
	DefaultConsolesPerServer  = 4
	DefaultConsolesPerAccount = 20
	DefaultConsoleLease       = 30 * time.Second
)

func (c ConsoleCaps) withDefaults() ConsoleCaps {
	if c.PerServer <= 0 {
		c.PerServer = DefaultConsolesPerServer
	}
	if c.PerAccount <= 0 {
		c.PerAccount = DefaultConsolesPerAccount
	}
	if c.Lease <= 0 {
		c.Lease = DefaultConsoleLease
	}
	return c
}

// room answers why a server with onServer sessions, of an account with onAccount,
// may not have one more: CodeBusy (409) with the cap in the message and the lease as
// Retry-After (the longest a session of a process that died holds its place); nil
// when it may.
func (c ConsoleCaps) room(onServer, onAccount int) error {
	var e *hosting.Error
	switch {
	case onServer >= c.PerServer:
		e = hosting.Errorf(hosting.CodeBusy, "error.console_server_full", "count", c.PerServer)
	case onAccount >= c.PerAccount:
		e = hosting.Errorf(hosting.CodeBusy, "error.console_account_full", "count", c.PerAccount)
	default:
		return nil
	}
	e.RetryAfter = max(1, int(c.Lease/time.Second))
	return e
}

// ErrConsolesEnded is what an open console answers once its process has begun to
// stop (EndConsoles).
var ErrConsolesEnded = errors.New("berthd is stopping")

// consoleSessions are this process's open sessions.
type consoleSessions struct {
	holder string
	// now is the clock of the leases: the system's, never a test clock (leases are
	// compared between processes).
	now func() time.Time

	mu      sync.Mutex
	open    map[int64]*consoleSession
	held    bool // a session was opened once: there may be rows to delete
	beating bool // the heartbeat runs
	ending  bool // EndConsoles began
	// drained is closed once ending and no session is open.
	drained     chan struct{}
	drainedOnce sync.Once
	stop        chan struct{}
	beat        sync.WaitGroup
}

func newConsoleSessions() *consoleSessions {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return &consoleSessions{holder: fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b)),
		now:  func() time.Time { return time.Now().UTC().Truncate(time.Millisecond) },
		open: map[int64]*consoleSession{}, drained: make(chan struct{}), stop: make(chan struct{})}
}

// consoleRoom answers whether a server may have one more console session now (see
// ConsoleCaps.room), without taking the place.
func (s *Service) consoleRoom(ctx context.Context, srv hosting.Server) error {
	onServer, onAccount, err := s.store.CountConsoleSessions(ctx, srv.AccountID, srv.ID, s.consoles.now())
	if err != nil {
		return internal("count console sessions", err)
	}
	return s.consoleCaps.room(onServer, onAccount)
}

// startConsoleSession takes a place for a session of srv's console, counting the
// others in the same transaction (serialized per account, so that connections
// arriving together on several processes cannot all pass), and returns it with no
// console attached yet. Errors: those of ConsoleCaps.room; unavailable once the
// process stops.
func (s *Service) startConsoleSession(ctx context.Context, srv hosting.Server) (*consoleSession, error) {
	cs, caps := s.consoles, s.consoleCaps
	if cs.stopping() {
		return nil, unreachable()
	}
	now := cs.now()
	var id int64
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		if err := tx.Serialize(ctx, "console_sessions."+strconv.FormatInt(srv.AccountID, 10)); err != nil {
			return err
		}
		onServer, onAccount, err := tx.CountConsoleSessions(ctx, srv.AccountID, srv.ID, now)
		if err != nil {
			return err
		}
		if err := caps.room(onServer, onAccount); err != nil {
			return err
		}
		if err := tx.DeleteExpiredConsoleSessions(ctx, now.Add(-consoleTicketsKept)); err != nil {
			return err
		}
		id, err = tx.CreateConsoleSession(ctx, hosting.ConsoleSession{AccountID: srv.AccountID, ServerID: srv.ID,
			Holder: cs.holder, StartedAt: now, ExpiresAt: now.Add(caps.Lease)})
		return err
	})
	if err != nil {
		return nil, internal("console session", err)
	}
	c := &consoleSession{s: s, id: id}
	cs.mu.Lock()
	if cs.ending {
		cs.mu.Unlock()
		s.deleteConsoleSession(id)
		return nil, unreachable()
	}
	cs.open[id], cs.held = c, true
	if !cs.beating {
		cs.beating = true
		cs.beat.Add(1)
		go s.renewConsoleSessions(caps.Lease)
	}
	cs.mu.Unlock()
	return c, nil
}

func (cs *consoleSessions) stopping() bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.ending
}

// renewConsoleSessions moves the leases of this process's sessions on every lease/3,
// for as long as it has any.
func (s *Service) renewConsoleSessions(lease time.Duration) {
	cs := s.consoles
	defer cs.beat.Done()
	every := lease / 3
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-cs.stop:
			return
		case <-t.C:
		}
		cs.mu.Lock()
		if len(cs.open) == 0 {
			cs.beating = false
			cs.mu.Unlock()
			return
		}
		ids := make([]int64, 0, len(cs.open))
		for id := range cs.open {
			ids = append(ids, id)
		}
		cs.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), every)
		err := s.store.InTx(ctx, func(tx store.Tx) error { return tx.RenewConsoleSessions(ctx, ids, cs.now().Add(lease)) })
		cancel()
		if err != nil {
			s.log.Warn("console sessions: leases not renewed; they count until they run out", "sessions", len(ids), "err", err)
		}
	}
}

// deleteConsoleSession frees a session's place.
func (s *Service) deleteConsoleSession(id int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.store.InTx(ctx, func(tx store.Tx) error { return tx.DeleteConsoleSessions(ctx, []int64{id}) }); err != nil {
		s.log.Warn("console session: place not freed; it counts until its lease runs out", "session", id, "err", err)
	}
}

// EndConsoles ends this process's console sessions, as it stops: each open console
// answers ErrConsolesEnded, so that its connection closes saying why, and frees its
// place when its connection has closed; a new one is refused (503). It waits for
// them until ctx ends, then frees the places still held.
func (s *Service) EndConsoles(ctx context.Context) {
	cs := s.consoles
	cs.mu.Lock()
	if cs.ending {
		cs.mu.Unlock()
		return
	}
	cs.ending = true
	close(cs.stop)
	open := make([]*consoleSession, 0, len(cs.open))
	for _, c := range cs.open {
		open = append(open, c)
	}
	if len(open) == 0 {
		cs.drainedOnce.Do(func() { close(cs.drained) })
	}
	held := cs.held
	cs.mu.Unlock()
	for _, c := range open {
		c.end()
	}
	select {
	case <-cs.drained:
	case <-ctx.Done():
	}
	cs.beat.Wait()
	if !held {
		return
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := s.store.InTx(dctx, func(tx store.Tx) error { return tx.DeleteConsoleSessionsOf(dctx, cs.holder) }); err != nil {
		s.log.Warn("console sessions: places not freed at stop; they count until their leases run out", "err", err)
	}
}

// consoleSession is an open console (the driver's connection) holding its place
// under the caps until Close.
type consoleSession struct {
	s  *Service
	id int64

	mu     sync.Mutex
	con    io.ReadWriteCloser // nil until attached
	shut   bool               // con was closed (or is not to be attached)
	ended  atomic.Bool        // EndConsoles closed it
	closed sync.Once
}

// attach gives the session its console; false when the session was ended first.
func (c *consoleSession) attach(con io.ReadWriteCloser) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.shut {
		return false
	}
	c.con = con
	return true
}

// closeConsole closes the driver's connection, once.
func (c *consoleSession) closeConsole() error {
	c.mu.Lock()
	con, shut := c.con, c.shut
	c.shut = true
	c.mu.Unlock()
	if shut || con == nil {
		return nil
	}
	return con.Close()
}

// end closes the console as the process stops: its reader gets ErrConsolesEnded.
func (c *consoleSession) end() {
	c.ended.Store(true)
	_ = c.closeConsole()
}

func (c *consoleSession) Read(p []byte) (int, error) {
	n, err := c.con.Read(p)
	if err != nil && c.ended.Load() {
		err = ErrConsolesEnded
	}
	return n, err
}

func (c *consoleSession) Write(p []byte) (int, error) {
	n, err := c.con.Write(p)
	if err != nil && c.ended.Load() {
		err = ErrConsolesEnded
	}
	return n, err
}

// Close closes the console and frees the session's place.
func (c *consoleSession) Close() error {
	err := c.closeConsole()
	c.closed.Do(func() {
		c.s.deleteConsoleSession(c.id)
		cs := c.s.consoles
		cs.mu.Lock()
		delete(cs.open, c.id)
		if cs.ending && len(cs.open) == 0 {
			cs.drainedOnce.Do(func() { close(cs.drained) })
		}
		cs.mu.Unlock()
	})
	return err
}
