package ops

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// A server's serial console (issue 17): the account holder asks for a ticket (POST
// /servers/{id}/console, or the web console's page), then one WebSocket connection
// presents it and carries the console both ways. The ticket is the connection's only
// credential (a browser cannot send a token with a WebSocket), so it is short-lived,
// spent by the first connection, and stored hashed; every berthd on the database can
// spend it.

// ConsoleTicketTTL is how long a console ticket waits for its connection.
const ConsoleTicketTTL = 60 * time.Second

// ConsoleTicketPrefix starts every console ticket, so that secret scanners can spot
// leaked ones.
const ConsoleTicketPrefix = "berthc_"

// consoleTicketsKept is how long tickets are kept after they expired: a late
// connection is told its ticket expired (or was used) rather than that it is unknown.
const consoleTicketsKept = time.Hour

// IssuedTicket is a console ticket as its holder gets it, once.
type IssuedTicket struct {
	Secret   string
	ServerID int64
	// ExpiresAt is on the account's clock (its test clock in a sandbox).
	ExpiresAt time.Time
}

// ConsoleTicket issues a one-use ticket to attach to a server's serial console
// within ConsoleTicketTTL. Errors, in the order of docs/api.md, Errors: not_found,
// server_suspended (403); busy (409) when the server or its account has as many
// console sessions open as ConsoleCaps allow (no operation named; the connection is
// refused too if they still have when it arrives), or while an operation takes the
// server through another status than running (its end decides whether there is a
// console); validation_failed on "server" when it is not running and nothing is
// under way; unavailable (503) when its host cannot be reached.
func (s *Service) ConsoleTicket(ctx context.Context, p hosting.Principal, ref hosting.ServerRef) (IssuedTicket, error) {
	srv, err := s.WritableServer(ctx, p, ref)
	if err != nil {
		return IssuedTicket{}, err
	}
	if err := s.consoleRoom(ctx, srv); err != nil {
		return IssuedTicket{}, err
	}
	if err := s.consoleReady(ctx, srv); err != nil {
		return IssuedTicket{}, err
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	secret := ConsoleTicketPrefix + base64.RawURLEncoding.EncodeToString(b)
	now := s.Now()
	t := hosting.ConsoleTicket{AccountID: srv.AccountID, ServerID: srv.ID, Hash: HashToken(secret), CreatedAt: now, ExpiresAt: now.Add(ConsoleTicketTTL)}
	err = s.store.InTx(ctx, func(tx store.Tx) error {
		if err := tx.DeleteConsoleTickets(ctx, now.Add(-consoleTicketsKept)); err != nil {
			return err
		}
		_, err := tx.CreateConsoleTicket(ctx, t)
		return err
	})
	if err != nil {
		return IssuedTicket{}, internal("console ticket", err)
	}
	return IssuedTicket{Secret: secret, ServerID: srv.ID, ExpiresAt: t.ExpiresAt.Add(s.ClockAhead(srv.AccountID))}, nil
}

// consoleReady answers why a server has no console now, or nil when it has one.
func (s *Service) consoleReady(ctx context.Context, srv hosting.Server) error {
	if srv.Status != hosting.StatusRunning {
		if srv.Operation != nil {
			return busy(srv.Operation)
		}
		return hosting.Invalid("server", "validation.console_not_running", "status", string(srv.Status))
	}
	if s.reach != nil && s.reach.Unreachable(ctx, srv.Name) {
		return unreachable()
	}
	return nil
}

func unreachable() error {
	e := hosting.Errorf(hosting.CodeUnavailable, "error.unavailable")
	e.RetryAfter = 30
	return e
}

// OpenConsole spends a console ticket and attaches to the console of its server,
// which ref (the server the connection names) must be. It returns the ticket's
// account as soon as it is known, with an error too (its errors are in its
// language). Errors: unauthenticated for a ticket that is unknown, used or expired
// (each with its message); account_blocked; not_found when ref is not the ticket's
// server or the server is gone; then those of ConsoleTicket, checked again now: the
// session takes its place under ConsoleCaps here. A ticket is spent by the first
// connection that presents it, whatever its outcome. The console's Close frees the
// place; until then it is renewed (see EndConsoles for the process's end).
func (s *Service) OpenConsole(ctx context.Context, secret string, ref hosting.ServerRef) (io.ReadWriteCloser, hosting.Account, error) {
	var acct hosting.Account
	unknown := hosting.Errorf(hosting.CodeUnauthenticated, "error.console_ticket_unknown")
	if !strings.HasPrefix(secret, ConsoleTicketPrefix) || len(secret) > 200 {
		return nil, acct, unknown
	}
	now := s.Now()
	var t hosting.ConsoleTicket
	var spent bool
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		t, spent, err = tx.SpendConsoleTicket(ctx, HashToken(secret), now)
		return err
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, acct, unknown
	case err != nil:
		return nil, acct, internal("spend console ticket", err)
	}
	if acct, err = s.store.Account(ctx, t.AccountID); err != nil {
		return nil, acct, internal("account", err)
	}
	switch {
	case spent:
	case t.UsedAt != nil:
		return nil, acct, hosting.Errorf(hosting.CodeUnauthenticated, "error.console_ticket_used")
	default:
		return nil, acct, hosting.Errorf(hosting.CodeUnauthenticated, "error.console_ticket_expired")
	}
	if acct.Blocked {
		return nil, acct, hosting.Errorf(hosting.CodeAccountBlocked, "error.account_blocked")
	}
	if ref == (hosting.ServerRef{}) { // the path names no server
		return nil, acct, hosting.ErrNotFound()
	}
	srv, err := s.WritableServer(ctx, hosting.Principal{Account: acct}, ref)
	if err == nil && srv.ID != t.ServerID {
		err = hosting.ErrNotFound()
	}
	if err != nil {
		return nil, acct, err
	}
	sess, err := s.startConsoleSession(ctx, srv)
	if err != nil {
		return nil, acct, err
	}
	con, err := s.attachConsole(ctx, srv)
	if err == nil && !sess.attach(con) { // the process began to stop meanwhile
		_ = con.Close()
		err = unreachable()
	}
	if err != nil {
		_ = sess.Close()
		return nil, acct, err
	}
	return sess, acct, nil
}

// attachConsole attaches to a running server's console.
func (s *Service) attachConsole(ctx context.Context, srv hosting.Server) (io.ReadWriteCloser, error) {
	if err := s.consoleReady(ctx, srv); err != nil {
		return nil, err
	}
	if s.driver == nil {
		return nil, unreachable()
	}
	con, err := s.driver.Console(ctx, srv.Name)
	switch {
	case errors.Is(err, compute.ErrNotRunning), errors.Is(err, compute.ErrNotFound):
		// The machine is not up, though the record says running: it has just
		// stopped, and the record will follow.
		return nil, hosting.Invalid("server", "validation.console_not_running", "status", string(hosting.StatusStopped))
	case errors.Is(err, compute.ErrUnavailable):
		e := unreachable().(*hosting.Error)
		e.Cause = err
		return nil, e
	case err != nil:
		return nil, internal("console", err)
	}
	return con, nil
}

// ConsoleAllowed reports whether an open console of the account's server ref may go
// on: CodeAccountBlocked once the account is blocked, CodeNotFound once the server
// is gone, CodeServerSuspended once it is suspended; any other error is the store's,
// and says nothing either way. An open console is checked again and again with it, so
// that an operator's block cuts a session opened before it, on whichever process
// holds it.
func (s *Service) ConsoleAllowed(ctx context.Context, accountID int64, ref hosting.ServerRef) error {
	acct, err := s.store.Account(ctx, accountID)
	if err != nil {
		return internal("account", err)
	}
	if acct.Blocked {
		return hosting.Errorf(hosting.CodeAccountBlocked, "error.account_blocked")
	}
	_, err = s.WritableServer(ctx, hosting.Principal{Account: acct}, ref)
	return err
}
