package httpapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/i18n"
	"github.com/berthhq/berth/internal/ops"
)

// A server's serial console (issue 17). POST /servers/{id}/console (scope power)
// answers a ticket: the URL of a WebSocket, GET /v1/servers/{id}/console?ticket=...,
// that carries the console both ways. The WebSocket is served outside the route
// table: a browser cannot send a token with it, so the ticket in its URL is its only
// credential, spent by the first connection that presents it (ops.OpenConsole).
// Refusals before the upgrade answer in the API's error format: 426 for a request
// that is not a WebSocket handshake (the ticket is then left unspent), 401 for a
// ticket that is unknown, used or expired (counted against the address like an
// unknown token), 403, 404, 409, 422 and 503 as for the ticket itself.
//
// On the WebSocket, every message from the server is a binary one holding what the
// guest printed; every message to it, text or binary, is typed into the guest as its
// bytes. The server closes with 1000 when the console ends (the server stopped), with
// 1008 when the session may not go on (ConsoleRecheck), with 1001 when berthd stops,
// and pings every ConsolePing; a client that does not answer is dropped. Sessions
// are capped per server and per account (ops.ConsoleCaps): past the cap the ticket,
// and a connection with a ticket issued before, are refused with 409 busy.

// ConsolePath is the path of a server's console WebSocket, {id} standing for the
// server.
const ConsolePath = "/servers/{id}/console"

// ConsolePing is how often a console WebSocket is pinged: proxies drop idle
// connections, and a client that has gone is noticed.
var ConsolePing = 30 * time.Second

// ConsoleRecheck is how often an open console checks that its account is not blocked
// and its server neither deleted nor suspended: at most that long after an operator
// blocks an account, its consoles are cut.
var ConsoleRecheck = 5 * time.Second

// codeUpgradeRequired answers a plain request to a WebSocket's address (426).
const codeUpgradeRequired hosting.Code = "upgrade_required"

func (s *Server) consoleTicket(r *request) (int, any, error) {
	srv, err := s.writable(r)
	if err != nil {
		return 0, nil, err
	}
	if err := decode(r.Request, &struct{}{}); err != nil {
		return 0, nil, err
	}
	t, err := s.svc.Consoles.ConsoleTicket(r.ctx, r.p, hosting.ServerRef{ID: srv.ID})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, one(api.ConsoleTicket{URL: s.ConsoleURL(r.Request, t.ServerID, t.Secret), ExpiresAt: t.ExpiresAt}), nil
}

// ConsoleURL is the address of a server's console WebSocket with a ticket: on the
// public URL when one is set (wss:// for https://), else on the request's own scheme
// and Host.
func (s *Server) ConsoleURL(r *http.Request, serverID int64, ticket string) string {
	u := url.URL{Scheme: "ws", Host: r.Host}
	if r.TLS != nil {
		u.Scheme = "wss"
	}
	if p := s.publicURL; p != nil {
		u.Host, u.Path = p.Host, p.Path
		u.Scheme = map[string]string{"http": "ws", "https": "wss"}[p.Scheme]
	}
	u.Path += "/v1" + strings.Replace(ConsolePath, "{id}", strconv.FormatInt(serverID, 10), 1)
	u.RawQuery = url.Values{"ticket": {ticket}}.Encode()
	return u.String()
}

// SocketRoutes lists the routes served outside the route table, WebSockets whose
// URL carries their credential, as "METHOD /v1/path", for tests and docs.
func (s *Server) SocketRoutes() []struct{ Method, Path string } {
	return []struct{ Method, Path string }{{http.MethodGet, "/v1" + ConsolePath}}
}

// isWebSocket reports whether r asks to become a WebSocket.
func isWebSocket(r *http.Request) bool {
	has := func(header, token string) bool {
		for _, v := range r.Header.Values(header) {
			for _, t := range strings.Split(v, ",") {
				if strings.EqualFold(strings.TrimSpace(t), token) {
					return true
				}
			}
		}
		return false
	}
	return has("Connection", "upgrade") && has("Upgrade", "websocket")
}

// consoleSocket serves GET /v1/servers/{id}/console?ticket=...: the checks of
// ops.OpenConsole, then the WebSocket.
func (s *Server) consoleSocket(w http.ResponseWriter, r *http.Request) {
	lang := i18n.MatchAcceptLanguage(r.Header.Get("Accept-Language"))
	if !isWebSocket(r) {
		w.Header().Set("Upgrade", "websocket")
		w.Header().Set("Connection", "Upgrade")
		s.fail(w, r, lang, hosting.Errorf(codeUpgradeRequired, "error.upgrade_required"))
		return
	}
	// An address that failed too often is refused before its ticket is looked at,
	// as for tokens: guessing is slow.
	ctx, now, ip := r.Context(), time.Now(), s.addrKey(r)
	res, err := s.anon.Peek(ctx, ip, now)
	if err != nil {
		s.fail(w, r, lang, err)
		return
	}
	if !res.Allowed {
		setLimitHeaders(w.Header(), res)
		s.countLimited("address")
		s.fail(w, r, lang, limited(res))
		return
	}
	ref, _ := hosting.ParseServerRef(r.PathValue("id"))
	con, acct, err := s.svc.Consoles.OpenConsole(ctx, r.URL.Query().Get("ticket"), ref)
	if acct.ID != 0 && i18n.Supported(acct.Language) {
		lang = acct.Language
	}
	if acct.ID != 0 { // a ticket was spent: who attached to which console, or why not
		e := hosting.AuditEntry{Actor: "api", Action: "GET /v1" + ConsolePath, AccountID: &acct.ID,
			Target: "id=" + r.PathValue("id"), Status: http.StatusSwitchingProtocols, Client: clientAddr(r)}
		if err != nil {
			e.Status, _ = StatusOf(hosting.ErrorCode(err))
			e.Code = string(hosting.ErrorCode(err))
		}
		s.svc.Gate.Audit(ctx, e)
	}
	if err != nil {
		if hosting.IsCode(err, hosting.CodeUnauthenticated) {
			res, aerr := s.anon.Allow(ctx, ip, now)
			if aerr != nil {
				s.fail(w, r, lang, aerr)
				return
			}
			setLimitHeaders(w.Header(), res)
			if !res.Allowed {
				s.countLimited("address")
				err = limited(res)
			}
		}
		s.fail(w, r, lang, err)
		return
	}
	defer con.Close()
	// The ticket is the credential, not a cookie the browser adds by itself: a page of
	// any origin that holds one may use it (a client's own web app embedding the
	// console), so the Origin is not checked.
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return // Accept answered the client
	}
	s.relay(ws, con, func(ctx context.Context) error { return s.svc.Consoles.ConsoleAllowed(ctx, acct.ID, ref) })
}

// relay carries the console both ways until either side ends, or until allowed
// (asked every ConsoleRecheck) says the session may not go on: the account was
// blocked, the server deleted or suspended. The client then gets close code 1008
// (policy violation) with the reason.
func (s *Server) relay(ws *websocket.Conn, con io.ReadWriteCloser, allowed func(context.Context) error) {
	// The request's context is not to be used once the connection is hijacked.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tick(ctx, ConsoleRecheck, func() bool { // the session's right to go on
		actx, acancel := context.WithTimeout(ctx, ConsoleRecheck)
		err := allowed(actx)
		acancel()
		if code := hosting.ErrorCode(err); code == hosting.CodeAccountBlocked || code == hosting.CodeNotFound || code == hosting.CodeServerSuspended {
			_ = ws.Close(websocket.StatusPolicyViolation, string(code))
			cancel()
			return false
		}
		return true // anything else (the database away for a moment) leaves the session be
	})
	go func() { // guest → client
		defer cancel()
		buf := make([]byte, 32<<10)
		for {
			n, err := con.Read(buf)
			if n > 0 {
				if werr := ws.Write(ctx, websocket.MessageBinary, buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				if errors.Is(err, ops.ErrConsolesEnded) {
					_ = ws.Close(websocket.StatusGoingAway, ops.ErrConsolesEnded.Error())
				} else {
					_ = ws.Close(websocket.StatusNormalClosure, "console ended")
				}
				return
			}
		}
	}()
	go tick(ctx, ConsolePing, func() bool { // keepalive
		pctx, pcancel := context.WithTimeout(ctx, ConsolePing)
		err := ws.Ping(pctx)
		pcancel()
		if err != nil {
			cancel()
			return false
		}
		return true
	})
	for { // client → guest
		_, data, err := ws.Read(ctx)
		if err != nil {
			break
		}
		if _, err := con.Write(data); err != nil {
			_ = ws.Close(websocket.StatusNormalClosure, "console ended")
			break
		}
	}
	cancel()
	_ = con.Close()
	_ = ws.CloseNow()
}

// tick calls f every d until ctx ends or f answers false.
func tick(ctx context.Context, d time.Duration, f func() bool) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !f() {
			return
		}
	}
}
