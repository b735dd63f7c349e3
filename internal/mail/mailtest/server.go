// Package mailtest holds the conformance suite every mail.Sender passes (Exercise)
// and a real SMTP server in-process (github.com/emersion/go-smtp) that records the
// envelopes and the parsed messages it accepts, for the tests of mail's SMTP sender
// and of each mail Berth sends, end to end from its trigger.
package mailtest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/big"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	netmail "net/mail"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Mode is how a Server speaks TLS.
type Mode int

const (
	// Plain offers no STARTTLS.
	Plain Mode = iota
	// StartTLS offers STARTTLS (and so smtp:// URLs upgrade).
	StartTLS
	// Implicit speaks TLS from the first byte (smtps://).
	Implicit
)

// ServerOptions tune a Server.
type ServerOptions struct {
	Mode Mode
	// User and Password, when set, are required (AUTH PLAIN) before MAIL FROM.
	User, Password string
	// Delay holds each MAIL FROM this long before answering it: mails are in flight
	// for a while, and a client that dies meanwhile has had none accepted.
	Delay time.Duration
	// EndDelay holds the answer to each message's end (DATA's final ".") this long:
	// the mail is accepted when its end comes, and a client that dies meanwhile has
	// had it accepted without hearing so.
	EndDelay time.Duration
}

// Received is a mail the server accepted: its envelope and the message parsed.
type Received struct {
	EnvelopeFrom string
	EnvelopeTo   []string
	// TLS says the transaction ran over TLS (STARTTLS or implicit); User is who
	// authenticated ("" when none did).
	TLS  bool
	User string
	// Raw is the message as it came; Header its header as it came (encoded).
	Raw    []byte
	Header netmail.Header
	// What the header and body say, decoded.
	To, From, Subject, MessageID, InReplyTo, Language string
	References                                        []string
	ContentType                                       string
	Text, HTML                                        string
}

// Server is an SMTP server on 127.0.0.1 for one test; it stops when the test ends.
type Server struct {
	o    ServerOptions
	srv  *smtp.Server
	ln   net.Listener
	cert *x509.Certificate

	mu       sync.Mutex
	received []Received
	refused  []Received
	refusals []*smtp.SMTPError
	attempts int
	changed  chan struct{}
}

// NewServer starts a Server.
func NewServer(t testing.TB, o ServerOptions) *Server {
	t.Helper()
	s := &Server{o: o, changed: make(chan struct{})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.srv = smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) { return &session{s: s, c: c}, nil }))
	s.srv.Domain = "mailtest.localhost"
	s.srv.ReadTimeout, s.srv.WriteTimeout = time.Minute, time.Minute
	s.srv.MaxMessageBytes = 10 << 20
	s.srv.EnableSMTPUTF8 = true
	if o.Mode != Plain {
		cfg, cert := selfSigned(t)
		s.cert = cert
		s.srv.TLSConfig = cfg
		if o.Mode == Implicit {
			ln = tls.NewListener(ln, cfg)
		}
	}
	s.ln = ln
	go func() { _ = s.srv.Serve(ln) }()
	t.Cleanup(func() { _ = s.srv.Close() })
	return s
}

// URL is the server's smtp:// (smtps:// under Implicit) URL, with its user and
// password.
func (s *Server) URL() string {
	u := url.URL{Scheme: "smtp", Host: s.ln.Addr().String()}
	if s.o.Mode == Implicit {
		u.Scheme = "smtps"
	}
	if s.o.User != "" {
		u.User = url.UserPassword(s.o.User, s.o.Password)
	}
	return u.String()
}

// ClientTLS is a TLS configuration that trusts the server's certificate.
func (s *Server) ClientTLS() *tls.Config {
	pool := x509.NewCertPool()
	if s.cert != nil {
		pool.AddCert(s.cert)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

// Refuse makes the server answer the next n messages' DATA with code (a 4xx: try
// again later; a 5xx: never) instead of accepting them.
func (s *Server) Refuse(code, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.refusals = append(s.refusals, &smtp.SMTPError{Code: code, EnhancedCode: smtp.EnhancedCode{code / 100, 3, 0},
			Message: "mailtest refuses this one"})
	}
}

// Attempts counts the messages whose DATA was sent, refused or not.
func (s *Server) Attempts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.attempts
}

// Refused are the mails Refuse made the server refuse, in order.
func (s *Server) Refused() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.refused...)
}

// Messages are the mails accepted so far, in order.
func (s *Server) Messages() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.received...)
}

// Wait waits up to timeout for n mails accepted in all and returns them; it fails
// the test when fewer came.
func (s *Server) Wait(t testing.TB, n int, timeout time.Duration) []Received {
	t.Helper()
	deadline := time.After(timeout)
	for {
		s.mu.Lock()
		got, changed := len(s.received), s.changed
		s.mu.Unlock()
		if got >= n {
			return s.Messages()
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("SMTP server: %d mails after %s, want %d", got, timeout, n)
		}
	}
}

// ByMessageID is the accepted mail of a Message-ID (false when none).
func (s *Server) ByMessageID(id string) (Received, bool) {
	for _, r := range s.Messages() {
		if r.MessageID == id {
			return r, true
		}
	}
	return Received{}, false
}

type session struct {
	s    *Server
	c    *smtp.Conn
	user string
	from string
	to   []string
}

var _ smtp.AuthSession = (*session)(nil)

func (ss *session) AuthMechanisms() []string {
	if ss.s.o.User == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (ss *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, password string) error {
		if user != ss.s.o.User || password != ss.s.o.Password {
			return errors.New("invalid credentials")
		}
		ss.user = user
		return nil
	}), nil
}

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	if ss.s.o.User != "" && ss.user == "" {
		return smtp.ErrAuthRequired
	}
	time.Sleep(ss.s.o.Delay)
	ss.from = from
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	ss.to = append(ss.to, to)
	return nil
}

func (ss *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if err := ss.accept(raw); err != nil {
		return err
	}
	time.Sleep(ss.s.o.EndDelay)
	return nil
}

// accept records the message raw as accepted, or as refused by the next refusal
// queued.
func (ss *session) accept(raw []byte) error {
	s := ss.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attempts++
	rec, err := Parse(raw)
	if len(s.refusals) > 0 {
		refusal := s.refusals[0]
		s.refusals = s.refusals[1:]
		s.refused = append(s.refused, rec)
		return refusal
	}
	if err != nil {
		return &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 6, 0}, Message: "unparsable: " + err.Error()}
	}
	_, isTLS := ss.c.TLSConnectionState()
	rec.EnvelopeFrom, rec.EnvelopeTo, rec.TLS, rec.User = ss.from, append([]string(nil), ss.to...), isTLS, ss.user
	s.received = append(s.received, rec)
	close(s.changed)
	s.changed = make(chan struct{})
	return nil
}

func (ss *session) Reset()        { ss.from, ss.to = "", nil }
func (ss *session) Logout() error { return nil }

// Parse reads a message as a mail reader would: its header decoded (RFC 2047), its
// text and HTML bodies from a single part or a multipart/alternative, each decoded
// from its transfer encoding.
func Parse(raw []byte) (Received, error) {
	m, err := netmail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return Received{}, err
	}
	rec := Received{Raw: raw, Header: m.Header}
	dec := new(mime.WordDecoder)
	get := func(k string) string {
		v := m.Header.Get(k)
		if d, err := dec.DecodeHeader(v); err == nil {
			return d
		}
		return v
	}
	rec.To, rec.From, rec.Subject, rec.Language = get("To"), get("From"), get("Subject"), get("Content-Language")
	rec.MessageID = strings.Trim(m.Header.Get("Message-Id"), "<>")
	rec.InReplyTo = strings.Trim(m.Header.Get("In-Reply-To"), "<>")
	for _, r := range strings.Fields(m.Header.Get("References")) {
		rec.References = append(rec.References, strings.Trim(r, "<>"))
	}
	ct, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil {
		return rec, fmt.Errorf("content type: %w", err)
	}
	rec.ContentType = ct
	if !strings.HasPrefix(ct, "multipart/") {
		body, err := decodeBody(m.Body, m.Header.Get("Content-Transfer-Encoding"))
		if err != nil {
			return rec, err
		}
		if ct == "text/html" {
			rec.HTML = body
		} else {
			rec.Text = body
		}
		return rec, nil
	}
	mr := multipart.NewReader(m.Body, params["boundary"])
	for {
		p, err := mr.NextRawPart()
		if errors.Is(err, io.EOF) {
			return rec, nil
		}
		if err != nil {
			return rec, err
		}
		body, err := decodeBody(p, p.Header.Get("Content-Transfer-Encoding"))
		if err != nil {
			return rec, err
		}
		pct, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		switch pct {
		case "text/plain":
			rec.Text = body
		case "text/html":
			rec.HTML = body
		}
	}
}

func decodeBody(r io.Reader, cte string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(cte)) {
	case "quoted-printable":
		r = quotedprintable.NewReader(r)
	case "base64":
		r = base64.NewDecoder(base64.StdEncoding, r) // it skips the line breaks
	}
	b, err := io.ReadAll(r)
	return strings.ReplaceAll(string(b), "\r\n", "\n"), err
}

// selfSigned is a TLS configuration with a fresh certificate for 127.0.0.1 and
// localhost, and that certificate.
func selfSigned(t testing.TB) (*tls.Config, *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mailtest"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}},
		MinVersion: tls.VersionTLS12}, cert
}
