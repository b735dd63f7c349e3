package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/berthhq/berth/api"
)

// Version is the SDK's version, sent in the User-Agent.
const Version = "0.1.0"

// DefaultBaseURL is where a berthd serves by default.
const DefaultBaseURL = "http://127.0.0.1:8080/v1"

// DefaultTimeout bounds each request of a Client built without WithTimeout: longer
// than the 60 s the API may hold GET /operations/{id}?wait (which gets the timeout on
// top of its wait anyway, see WithTimeout).
const DefaultTimeout = 90 * time.Second

// maxBody bounds what is read of one answer (the largest, a page or the document, is
// far smaller).
const maxBody = 32 << 20

// Client calls one Berth. It is safe for concurrent use; build it with New.
type Client struct {
	base      string // without a trailing slash
	token     string
	http      *http.Client
	timeout   time.Duration // of one request; 0: none
	language  string
	retry     RetryPolicy
	userAgent string
	rate      *rateState // shared with copies (sandbox)
}

// RetryPolicy says when a call is sent again. A call is retried after 429 and 503,
// waiting the answer's Retry-After, and after a network error (no answer: the
// request may or may not have reached Berth) except for DELETE, waiting Backoff.
// A request that timed out (WithTimeout) is not sent again: a server that took it and
// said nothing for so long is not asked once more, and the caller learns it at once.
// Every POST carries an Idempotency-Key that stays the same on each retry of one
// call, so a retried order never makes a second server. 409 (busy) is never
// retried: wait on Error.Operation instead.
type RetryPolicy struct {
	// MaxRetries is how many times one call may be sent again; 0 never retries.
	MaxRetries int
	// MaxWait bounds the total time one call waits between its attempts: a wait that
	// would pass it is not begun, and the call returns the last error at once.
	MaxWait time.Duration
	// Backoff is the wait before retry n (0 for the first) when the answer named none:
	// after a network error, or a 429 or 503 without Retry-After. Default: 500 ms
	// doubling up to 8 s.
	Backoff func(n int) time.Duration
}

// DefaultRetryPolicy is the policy of a Client built without WithRetryPolicy: up to
// 5 retries, waiting at most 2 minutes in all.
var DefaultRetryPolicy = RetryPolicy{MaxRetries: 5, MaxWait: 2 * time.Minute}

func defaultBackoff(n int) time.Duration {
	d := 500 * time.Millisecond << min(n, 4)
	return min(d, 8*time.Second)
}

// Option configures a Client.
type Option func(*Client) error

// WithBaseURL sets the API's address, ending in /v1 (default DefaultBaseURL).
func WithBaseURL(u string) Option {
	return func(c *Client) error {
		p, err := url.Parse(u)
		if err != nil {
			return fmt.Errorf("berth: base URL %q: %w", u, err)
		}
		if p.Scheme != "http" && p.Scheme != "https" || p.Host == "" {
			return fmt.Errorf("berth: base URL %q: want http(s)://host[:port]/v1", u)
		}
		c.base = strings.TrimRight(u, "/")
		return nil
	}
}

// WithToken sets the API token sent as "Authorization: Bearer <token>".
func WithToken(token string) Option {
	return func(c *Client) error { c.token = token; return nil }
}

// WithHTTPClient sets the HTTP client (default: a new http.Client of its own). The
// client keeps its own Timeout, if it has one, and the Client's timeout (WithTimeout,
// DefaultTimeout without it) applies as well: whichever ends first cuts a request. A
// client with a Timeout shorter than 65 s makes WaitOperation hold each request for
// less than the API's 60 s.
func WithHTTPClient(h *http.Client) Option {
	return func(c *Client) error {
		if h == nil {
			return errors.New("berth: nil HTTP client")
		}
		c.http = h
		return nil
	}
}

// WithTimeout bounds each request, from sending it to the last byte of its answer
// (default DefaultTimeout, 90 s). A server that accepts the connection and does not
// answer in time fails the call with an error that matches ErrTimeout and names the
// server's address and d; it is not retried. A request the API is asked to hold
// (GET /operations/{id}?wait=N: WaitOperation, GetOperationWait) gets d on top of its N
// seconds, so a wait is never cut by a short timeout; each of the requests of a long
// wait is bounded, the wait as a whole only by ctx. Opening a serial console
// (ConnectServerConsole) is bounded by d, the open console is not. 0 sets no bound:
// ctx still does, and so does the Timeout of an HTTP client given with WithHTTPClient,
// which WithTimeout never changes.
func WithTimeout(d time.Duration) Option {
	return func(c *Client) error {
		if d < 0 {
			return errors.New("berth: negative timeout")
		}
		c.timeout = d
		return nil
	}
}

// WithLanguage sets Accept-Language (e.g. "de"): the language of messages before a
// token is resolved (401, and 429 of an address). Once the token is known, messages
// are in the account's language (see UpdateMe).
func WithLanguage(lang string) Option {
	return func(c *Client) error { c.language = lang; return nil }
}

// WithRetryPolicy replaces DefaultRetryPolicy.
func WithRetryPolicy(p RetryPolicy) Option {
	return func(c *Client) error {
		if p.MaxRetries < 0 || p.MaxWait < 0 {
			return errors.New("berth: negative retry policy")
		}
		c.retry = p
		return nil
	}
}

// WithoutRetries makes every call a single attempt: a 429 or 503 is returned at once.
func WithoutRetries() Option { return WithRetryPolicy(RetryPolicy{}) }

// WithUserAgent names the program using the SDK; it is sent before the SDK's own
// name ("berth-cli/1.2 berth-go/0.1.0 (go1.26; linux/amd64)").
func WithUserAgent(product string) Option {
	return func(c *Client) error {
		if product != "" {
			c.userAgent = product + " " + c.userAgent
		}
		return nil
	}
}

// New returns a Client. It fails only on a bad option (an unparsable base URL).
func New(opts ...Option) (*Client, error) {
	c := &Client{
		base:      DefaultBaseURL,
		http:      &http.Client{},
		timeout:   DefaultTimeout,
		retry:     DefaultRetryPolicy,
		userAgent: fmt.Sprintf("berth-go/%s (%s; %s/%s)", Version, runtime.Version(), runtime.GOOS, runtime.GOARCH),
		rate:      &rateState{},
	}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// BaseURL returns the API's address, without a trailing slash.
func (c *Client) BaseURL() string { return c.base }

// UserAgent returns the User-Agent the client sends.
func (c *Client) UserAgent() string { return c.userAgent }

type idempotencyKey struct{}

// WithIdempotencyKey makes the POST sent with ctx carry key (1 to 255 visible ASCII
// characters) instead of a fresh random one: a program that restarts can repeat an
// order and get the first answer again. Without it every call draws its own key.
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, idempotencyKey{}, key)
}

func newIdempotencyKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// do sends one call and decodes a 2xx answer's body into out (when not nil),
// retrying as c.retry allows. An error answer is an *Error.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, in, out any) error {
	var body []byte
	ctype, disposition := "application/json", ""
	if text, ok := in.(textBody); ok {
		body, ctype = []byte(text), "text/plain; charset=utf-8"
	} else if f, ok := in.(fileBody); ok {
		body, ctype, disposition = f.data, f.contentType, f.disposition
	} else if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return fmt.Errorf("berth: encoding the body of %s %s: %w", method, path, err)
		}
	}
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var key string
	if method == http.MethodPost {
		key, _ = ctx.Value(idempotencyKey{}).(string)
		if key == "" {
			key = newIdempotencyKey()
		}
	}
	backoff := c.retry.Backoff
	if backoff == nil {
		backoff = defaultBackoff
	}
	hold := heldFor(query)
	var waited time.Duration
	for attempt := 0; ; attempt++ {
		status, header, data, err := c.send(ctx, method, u, body, ctype, disposition, key, hold)
		var wait time.Duration
		switch {
		case err != nil:
			if ctx.Err() != nil || method == http.MethodDelete || errors.Is(err, ErrTimeout) {
				return err
			}
			wait = backoff(attempt)
		case status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable:
			e := decodeError(status, header, data)
			err, wait = e, e.RetryAfter
			if wait <= 0 {
				wait = backoff(attempt)
			}
		case status >= 400:
			return decodeError(status, header, data)
		default:
			if text, ok := out.(*textBody); ok {
				*text = textBody(data)
				return nil
			}
			if f, ok := out.(*fileAnswer); ok {
				f.header, f.data = header, data
				return nil
			}
			if out == nil || len(data) == 0 {
				return nil
			}
			if err := json.Unmarshal(data, out); err != nil {
				return fmt.Errorf("berth: decoding the answer to %s %s: %w", method, path, err)
			}
			return nil
		}
		if attempt >= c.retry.MaxRetries || waited+wait > c.retry.MaxWait || !sleep(ctx, wait) {
			return err
		}
		waited += wait
	}
}

// textBody is a request or answer body of plain text (a zone file), not JSON.
type textBody string

// fileBody is a request body that is a file (POST /attachments): its bytes, their
// Content-Type and a Content-Disposition naming it.
type fileBody struct {
	data                     []byte
	contentType, disposition string
}

// fileAnswer is an answer that is a file (GET /attachments/{id}): its headers and
// bytes as they came.
type fileAnswer struct {
	header http.Header
	data   []byte
}

// sleep waits d, or less when ctx ends first: then it reports false.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// heldFor is how long the API may hold a request of query before it answers: the N
// seconds of ?wait=N (GET /operations/{id}), else 0.
func heldFor(query url.Values) time.Duration {
	n, err := strconv.Atoi(query.Get("wait"))
	if err != nil || n <= 0 {
		return 0
	}
	return time.Duration(n) * time.Second
}

func withoutQuery(u string) string {
	u, _, _ = strings.Cut(u, "?")
	return u
}

// errNoAnswer is the cause of an attempt's context when the client's timeout ends it.
var errNoAnswer = errors.New("berth: no answer within the timeout")

// withTimeout bounds ctx by the client's timeout plus hold (nothing when the client has
// no timeout). timedOut tells, once the attempt failed, whether the bound cut it.
func (c *Client) withTimeout(ctx context.Context, hold time.Duration) (_ context.Context, cancel context.CancelFunc, timedOut func() bool) {
	if c.timeout <= 0 {
		return ctx, func() {}, func() bool { return false }
	}
	ctx, cancel = context.WithTimeoutCause(ctx, c.timeout+hold, errNoAnswer)
	return ctx, cancel, func() bool { return errors.Is(context.Cause(ctx), errNoAnswer) }
}

// send makes one attempt, within the client's timeout plus hold. err is a failure to
// get a whole answer; a *TimeoutError when the timeout cut it.
func (c *Client) send(ctx context.Context, method, u string, body []byte, ctype, disposition, key string, hold time.Duration) (int, http.Header, []byte, error) {
	ctx, cancel, timedOut := c.withTimeout(ctx, hold)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("berth: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if body != nil {
		req.Header.Set("Content-Type", ctype)
	}
	if disposition != "" {
		req.Header.Set("Content-Disposition", disposition)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.language != "" {
		req.Header.Set("Accept-Language", c.language)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if timedOut() {
			return 0, nil, nil, &TimeoutError{Method: method, URL: withoutQuery(u), Timeout: c.timeout + hold}
		}
		return 0, nil, nil, fmt.Errorf("berth: %s %s: %w", method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	c.rate.note(resp.Header)
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		if timedOut() {
			return 0, nil, nil, &TimeoutError{Method: method, URL: withoutQuery(u), Timeout: c.timeout + hold}
		}
		return 0, nil, nil, fmt.Errorf("berth: %s %s: reading the answer: %w", method, req.URL.Path, err)
	}
	return resp.StatusCode, resp.Header, data, nil
}

func decodeError(status int, header http.Header, data []byte) *Error {
	e := &Error{StatusCode: status, RetryAfter: retryAfter(header.Get("Retry-After")), RequestID: header.Get("X-Request-Id")}
	var body api.Error
	if json.Unmarshal(data, &body) == nil {
		e.Code, e.Message, e.Fields, e.Operation = body.Code, body.Message, body.Errors, body.Operation
	}
	return e
}

// retryAfter reads Retry-After: seconds or an HTTP date.
func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
		return time.Duration(max(n, 0)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// Ptr returns a pointer to v, for the optional fields of requests:
// api.ServerCreate{PlanID: client.Ptr(int64(3))}.
func Ptr[T any](v T) *T { return &v }
