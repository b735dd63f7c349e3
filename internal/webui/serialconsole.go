package webui

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/berthhq/berth/internal/hosting"
)

// The server console page (issue 17): a terminal (xterm.js, static/terminal.js) on
// the API's console WebSocket. The page asks this console for the ticket, with the
// session and its CSRF token: no API token is involved.

// serverConsolePage shows the terminal of a server's serial console.
func (c *Console) serverConsolePage(r *req) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	srv, err := c.svc.Servers.Server(r.ctx(), r.p, hosting.ServerRef{ID: id})
	if err != nil {
		return err
	}
	// xterm.js styles the terminal with <style> elements it creates: this page allows
	// inline styles (scripts stay 'self' only), and connections to the WebSocket.
	r.w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "+
		"img-src 'self' data:; connect-src 'self' "+c.socketOrigin(r)+"; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	c.render(r, http.StatusOK, "serverconsole", "console.serial_title", "servers", map[string]any{"S": srv})
	return nil
}

// socketOrigin is the origin (ws://host or wss://host) of the console WebSockets for
// this request.
func (c *Console) socketOrigin(r *req) string {
	u, err := url.Parse(c.consoleURL(r.Request, 1, ""))
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// consoleURL is Config.ConsoleURL, or the WebSocket on the request's own host.
func (c *Console) consoleURL(r *http.Request, serverID int64, ticket string) string {
	if c.cfg.ConsoleURL != nil {
		return c.cfg.ConsoleURL(r, serverID, ticket)
	}
	scheme := "ws"
	if r.TLS != nil {
		scheme = "wss"
	}
	return scheme + "://" + r.Host + "/v1/servers/" + itoa(serverID) + "/console?" + url.Values{"ticket": {ticket}}.Encode()
}

// consoleTicket answers the page's script a console ticket as JSON: {"url",
// "expires_at"}, or {"code", "message"} with the API's status for the error.
func (c *Console) consoleTicket(r *req) error {
	id, err := pathID(r, "id")
	if err != nil {
		return c.ticketError(r, err)
	}
	t, err := c.svc.Consoles.ConsoleTicket(r.ctx(), r.p, hosting.ServerRef{ID: id})
	if err != nil {
		return c.ticketError(r, err)
	}
	writeJSON(r.w, http.StatusCreated, struct {
		URL       string    `json:"url"`
		ExpiresAt time.Time `json:"expires_at"`
	}{c.consoleURL(r.Request, t.ServerID, t.Secret), t.ExpiresAt})
	return nil
}

func (c *Console) ticketError(r *req, err error) error {
	code := hosting.ErrorCode(err)
	status, ok := statusOf(code)
	if !ok {
		status = http.StatusInternalServerError
		c.log.Error("console ticket failed", "path", r.URL.Path, "err", err)
	}
	writeJSON(r.w, status, map[string]string{"code": string(code), "message": strings.Join(c.messages(r.lang, err), " ")})
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
