// Package powerdns is the nameserver.Publisher of PowerDNS Authoritative (Debian's
// pdns-server, 4.7 and later), driven through its HTTP API (docs/api.md, Domains:
// serving). Each zone is a Native zone of PowerDNS whose every RRset, the SOA and the
// apex NS included, is Berth's: Publish makes PowerDNS hold exactly the zone given
// (creating it, or one PATCH of the RRsets that differ), then flushes PowerDNS's cache
// for it so that the next answer over DNS is the new one (PowerDNS 4.7 purges a
// zone's cache entries on a PATCH or DELETE of its own, which the tests see; the flush
// makes it so whatever PowerDNS does, for one request more). The SOA serial is Berth's:
// the zones are made with no SOA-EDIT and no SOA-EDIT-API, and a zone found with
// either has them cleared.
//
// The API is small, so this is plain net/http: a client library would add a
// dependency for four endpoints.
package powerdns

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/berthhq/berth/internal/nameserver"
)

// Options say where PowerDNS's API is.
type Options struct {
	// URL is the API's base, the webserver's address: "http://127.0.0.1:8081".
	URL string
	// APIKey is PowerDNS's api-key, sent as X-API-Key.
	APIKey string
	// ServerID is the server of the API's paths; "localhost" when empty.
	ServerID string
	// Account marks the zones Berth publishes (PowerDNS's zone "account"), "berth"
	// when empty: Zones lists only those, so that a resync of a PowerDNS that also
	// serves other zones never withdraws them.
	Account string
	// HTTPClient makes the requests; when nil, a client whose every request ends
	// after DefaultTimeout.
	HTTPClient *http.Client
}

// DefaultAccount is the account of Berth's zones when Options.Account is empty.
const DefaultAccount = "berth"

// DefaultTimeout bounds each request of the default HTTP client: creating a zone of
// 5,000 RRsets, or replacing each of them in one PATCH, takes PowerDNS under 0.5 s
// (TestPublishLargeZone).
const DefaultTimeout = 30 * time.Second

// Client publishes zones to one PowerDNS server.
type Client struct {
	base    string // .../api/v1/servers/<id>
	key     string
	account string
	client  *http.Client
}

var _ nameserver.Publisher = (*Client)(nil)

// New returns a Client for o. It sends nothing: a wrong URL or key shows on the first
// call.
func New(o Options) (*Client, error) {
	u, err := url.Parse(o.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("powerdns: the API URL %q is not an http(s) URL", o.URL)
	}
	if o.APIKey == "" {
		return nil, errors.New("powerdns: no API key")
	}
	id := o.ServerID
	if id == "" {
		id = "localhost"
	}
	account := o.Account
	if account == "" {
		account = DefaultAccount
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: DefaultTimeout}
	}
	base := strings.TrimSuffix(u.String(), "/") + "/api/v1/servers/" + url.PathEscape(id)
	return &Client{base: base, key: o.APIKey, account: account, client: hc}, nil
}

// ErrRetryable is what errors.Is finds in an error that may pass if the call is made
// again later: PowerDNS unreachable or timing out, or answering 5xx or 429. Any other
// error (a refused API key, a zone PowerDNS will not take) stays until something
// changes.
var ErrRetryable = errors.New("powerdns: retryable")

// APIError is a refusal by PowerDNS: the HTTP status and PowerDNS's "error" text.
type APIError struct {
	Method, Path string
	Status       int
	Message      string
}

func (e *APIError) Error() string {
	msg := fmt.Sprintf("powerdns: %s %s: %d %s", e.Method, e.Path, e.Status, http.StatusText(e.Status))
	if e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden {
		msg += " (the API key was refused)"
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// Is makes errors.Is(err, ErrRetryable) true for a 5xx or a 429.
func (e *APIError) Is(target error) bool {
	return target == ErrRetryable &&
		(e.Status >= 500 || e.Status == http.StatusTooManyRequests)
}

// netError is a request that got no answer: retryable.
type netError struct{ err error }

func (e *netError) Error() string        { return "powerdns: " + e.err.Error() }
func (e *netError) Unwrap() error        { return e.err }
func (e *netError) Is(target error) bool { return target == ErrRetryable }
