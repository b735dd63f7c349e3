package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"time"
)

// The limits of an attempt (docs/SECURITY.md, API7).
const (
	DefaultTimeout = 15 * time.Second // the whole attempt: resolve, connect, send, answer
	AnswerBytes    = 1 << 10          // of the answer's body, kept for the delivery log
	headerBytes    = 64 << 10         // of the answer's headers
)

// UserAgent is the User-Agent of every delivery.
const UserAgent = "Berth-Webhooks/1"

// Options make a Client. The zero Options are the production ones: private addresses
// refused, the system's resolver, 15 s.
type Options struct {
	// AllowPrivate lifts the address rules (serve --webhook-allow-private, the
	// sandbox's default): loopback, private, own pools and plain http are allowed.
	AllowPrivate bool
	// OwnPools are the networks Berth hands its servers' addresses from, refused too.
	OwnPools []netip.Prefix
	// Timeout bounds each attempt; DefaultTimeout when 0.
	Timeout time.Duration
	// Resolver finds a host's addresses at each attempt; net.DefaultResolver when nil.
	Resolver Resolver
	// Dial connects to a vetted address; when nil a net.Dialer that checks the
	// address once more right before it connects.
	Dial DialFunc
	// TLSConfig for https; the system's roots when nil.
	TLSConfig *tls.Config
	// Now is the clock of webhook-timestamp; time.Now when nil.
	Now func() time.Time
}

// Client delivers events to webhooks; it is safe for concurrent use.
type Client struct {
	http    *http.Client
	opts    Options
	timeout time.Duration
}

// New is a Client with the Options.
func New(o Options) *Client {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	g := &guard{allowPrivate: o.AllowPrivate, own: o.OwnPools, resolver: o.Resolver, dial: o.Dial}
	if g.dial == nil {
		g.dial = (&net.Dialer{Control: g.control}).DialContext
	}
	t := &http.Transport{
		Proxy:                  nil, // never through a proxy: the guard vets the receiver's own address
		DialContext:            g.DialContext,
		TLSClientConfig:        o.TLSConfig,
		DisableKeepAlives:      true, // a new connection, so a new resolution, at each attempt
		DisableCompression:     true,
		MaxResponseHeaderBytes: headerBytes,
	}
	hc := &http.Client{
		Transport: t,
		Timeout:   o.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // a 3xx is the answer: a failed attempt
		},
	}
	return &Client{http: hc, opts: o, timeout: o.Timeout}
}

// Request is one attempt to deliver an event to a webhook.
type Request struct {
	URL       string
	ID        string          // the event's id: webhook-id, the receiver's dedupe key
	Type      string          // the event's type ("server.created")
	Timestamp time.Time       // when the event happened: the body's "timestamp"
	Data      json.RawMessage // the event's data; {} when empty
	Secrets   []string        // the current secret, and during a rotation the old one
}

// Body is the JSON body a delivery of r sends: {"type", "timestamp", "data"}. It
// fails when Data is not JSON.
func (r Request) Body() ([]byte, error) {
	data := r.Data
	if len(data) == 0 {
		data = json.RawMessage(`{}`)
	}
	return json.Marshal(struct {
		Type      string          `json:"type"`
		Timestamp time.Time       `json:"timestamp"`
		Data      json.RawMessage `json:"data"`
	}{r.Type, r.Timestamp.UTC(), data})
}

// Attempt is what one attempt did, for the delivery log.
type Attempt struct {
	At      time.Time     // when it was sent: webhook-timestamp
	Status  int           // the answer's status; 0 when none came
	Latency time.Duration // from sending to the end of the answer kept
	Answer  []byte        // the first AnswerBytes of the answer's body
	Reason  string        // why it failed ("address 10.0.0.1 refused: private"); "" when delivered
	Outcome Outcome
}

// Deliver makes one attempt to deliver r: a POST of r.Body() signed with r.Secrets
// (docs/webhooks.md), to an address the rules allow, cut after the Timeout. Nothing
// fails it but the attempt: every failure is an Attempt with Outcome Retry and its
// Reason (a malformed secret or Data, a refused url, the receiver's answer).
func (c *Client) Deliver(ctx context.Context, r Request) Attempt {
	a := Attempt{At: c.opts.Now(), Outcome: Retry}
	req, err := c.request(ctx, r, a.At)
	if err != nil {
		a.Reason = err.Error()
		return a
	}
	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		a.Latency = time.Since(start)
		a.Reason = c.describe(err)
		return a
	}
	a.Answer, _ = io.ReadAll(io.LimitReader(resp.Body, AnswerBytes))
	resp.Body.Close() // unread, it closes the connection (no keep-alive)
	a.Latency = time.Since(start)
	a.Status = resp.StatusCode
	a.Outcome = Classify(resp.StatusCode)
	a.Reason = statusReason(resp.StatusCode, a.Outcome)
	return a
}

// request is the signed POST of r at the time at.
func (c *Client) request(ctx context.Context, r Request, at time.Time) (*http.Request, error) {
	if err := CheckURL(r.URL, c.opts.AllowPrivate, c.opts.OwnPools); err != nil {
		return nil, err
	}
	body, err := r.Body()
	if err != nil {
		return nil, fmt.Errorf("event data: %w", err)
	}
	sig, err := Sign(r.ID, at, body, r.Secrets...)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set(HeaderID, r.ID)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
	req.Header.Set(HeaderSignature, sig)
	return req, nil
}

// statusReason is the Reason of an answer with status.
func statusReason(status int, o Outcome) string {
	switch {
	case o == Delivered:
		return ""
	case status >= 300 && status <= 399:
		return fmt.Sprintf("status %d: redirects are not followed", status)
	case o == Gone:
		return "status 410: the receiver is gone"
	default:
		return fmt.Sprintf("status %d", status)
	}
}

// describe is the Reason of an attempt that got no answer.
func (c *Client) describe(err error) string {
	var ae *AddressError
	var re *ResolveError
	var ne net.Error
	switch {
	case errors.As(err, &ae):
		return ae.Error()
	case errors.As(err, &re):
		return re.Error()
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return fmt.Sprintf("no answer within %s", c.timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}
