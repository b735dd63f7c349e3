package client

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"

	"github.com/coder/websocket"

	"github.com/berthhq/berth/api"
)

// RequestServerConsole asks for a one-use ticket to a server's serial console
// (scope power): open its URL with ConnectServerConsole before its ExpiresAt, 60
// seconds on. The URL is the connection's only credential: keep it like a token.
// ErrNotFound, ErrServerSuspended, ErrBusy (an operation takes the server through
// another status than running: wait on Error.Operation; or, with no Operation, the
// server or the account has as many consoles open as it may: Error.Message says
// which, and one must be closed first), ErrValidation (the server is not running,
// under "server").
func (c *Client) RequestServerConsole(ctx context.Context, server string) (*api.ConsoleTicket, error) {
	return one[api.ConsoleTicket](c, ctx, http.MethodPost, serverPath(server, "/console"), nil, nil)
}

// ServerConsole is an open serial console: Read gives what the server prints (io.EOF
// once the console ends, as when the server is powered off), Write types into it
// (Enter is "\r"), Close detaches. It is a net.Conn over the WebSocket.
type ServerConsole struct {
	net.Conn
}

// ConnectServerConsole opens the console a ticket's URL names (RequestServerConsole).
// ctx and the client's timeout (WithTimeout) bound the opening only: a server that
// does not complete the handshake in time is a *TimeoutError (ErrTimeout), an open
// console stays open for as long as it lasts. A refusal is an *Error:
// ErrUnauthenticated for a ticket that is unknown, used (each ticket opens one
// connection) or expired; ErrNotFound, ErrServerSuspended, ErrBusy, ErrValidation as
// for the ticket (ErrBusy also when the cap on open consoles was reached after the
// ticket was issued).
func (c *Client) ConnectServerConsole(ctx context.Context, ticketURL string) (*ServerConsole, error) {
	h := http.Header{"User-Agent": {c.userAgent}}
	if c.language != "" {
		h.Set("Accept-Language", c.language)
	}
	hc := *c.http
	hc.Timeout = 0 // ctx bounds the handshake; a timeout would cut the console
	dctx, cancel, timedOut := c.withTimeout(ctx, 0)
	defer cancel() // once open, the console no longer depends on dctx
	ws, resp, err := websocket.Dial(dctx, ticketURL, &websocket.DialOptions{HTTPClient: &hc, HTTPHeader: h})
	if err != nil {
		if resp != nil && resp.StatusCode >= 400 {
			data, _ := io.ReadAll(resp.Body)
			return nil, decodeError(resp.StatusCode, resp.Header, data)
		}
		if timedOut() {
			return nil, &TimeoutError{Method: http.MethodGet, URL: withoutQuery(ticketURL), Timeout: c.timeout}
		}
		return nil, fmt.Errorf("berth: console: %w", err)
	}
	ws.SetReadLimit(-1) // the server sends what the guest prints, in pieces of its choosing
	return &ServerConsole{Conn: websocket.NetConn(context.Background(), ws, websocket.MessageBinary)}, nil
}
