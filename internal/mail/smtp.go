package mail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// Server is an SMTP server as serve --smtp-url names it.
type Server struct {
	Host string
	Port int
	// Implicit says TLS from the first byte (smtps://); otherwise STARTTLS is used
	// when the server offers it, and the mail goes in the clear when it does not.
	Implicit bool
	// User and Password authenticate (optional; URL-decoded).
	User, Password string
}

// The ports of a URL that names none: submission (587) with STARTTLS, 465 with
// implicit TLS.
const (
	DefaultSMTPPort  = 587
	DefaultSMTPSPort = 465
)

// ParseURL reads smtp://[user[:password]@]host[:port] or smtps://...; user and
// password are URL-decoded (a "@" in a password is written %40). Its errors never
// hold the password.
func ParseURL(raw string) (Server, error) {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error repeats the whole URL, password included
		}
		return Server{}, fmt.Errorf("not a URL (%v); want smtp://user:password@host:port or smtps://...", err)
	}
	var s Server
	switch u.Scheme {
	case "smtp":
		s.Port = DefaultSMTPPort
	case "smtps":
		s.Port, s.Implicit = DefaultSMTPSPort, true
	default:
		return Server{}, fmt.Errorf("scheme %q: want smtp:// (STARTTLS when offered) or smtps:// (implicit TLS)", u.Scheme)
	}
	if u.Opaque != "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return Server{}, errors.New("want smtp[s]://user:password@host:port with nothing after the port")
	}
	s.Host = u.Hostname()
	if s.Host == "" {
		return Server{}, errors.New("no host")
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Server{}, fmt.Errorf("port %q: want 1 to 65535", p)
		}
		s.Port = n
	}
	if u.User != nil {
		s.User = u.User.Username()
		s.Password, _ = u.User.Password()
		if s.User == "" {
			return Server{}, errors.New("a password without a user")
		}
	}
	return s, nil
}

// String is the server's URL with its password redacted: what a log may show.
func (s Server) String() string {
	u := url.URL{Scheme: "smtp", Host: net.JoinHostPort(s.Host, strconv.Itoa(s.Port))}
	if s.Implicit {
		u.Scheme = "smtps"
	}
	switch {
	case s.Password != "":
		u.User = url.UserPassword(s.User, "REDACTED")
	case s.User != "":
		u.User = url.User(s.User)
	}
	return u.String()
}

// RedactURL is raw with its password replaced: for logs and errors about a URL that
// may not even parse.
func RedactURL(raw string) string {
	if s, err := ParseURL(raw); err == nil {
		return s.String()
	}
	if i := strings.LastIndex(raw, "@"); i >= 0 {
		scheme, _, ok := strings.Cut(raw[:i], "://")
		if !ok {
			scheme = ""
		} else {
			scheme += "://"
		}
		return scheme + "REDACTED" + raw[i:]
	}
	return raw
}

// SMTPOptions tune an SMTP sender. Zero is production's.
type SMTPOptions struct {
	// Timeout bounds each connection and command (default 30 s).
	Timeout time.Duration
	// TLS is the TLS configuration (default: the system's roots, ServerName the
	// host); tests give one that trusts their own certificate.
	TLS *tls.Config
	// HELO is the name said in EHLO (default: go-mail's, the machine's hostname).
	HELO string
}

// SMTP sends through an SMTP server: one connection per mail.
type SMTP struct {
	server Server
	opts   SMTPOptions
}

var _ Sender = (*SMTP)(nil)

// NewSMTP is the sender of serve --smtp-url rawURL (ParseURL's errors).
func NewSMTP(rawURL string, opts SMTPOptions) (*SMTP, error) {
	s, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.TLS == nil {
		opts.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if opts.TLS.ServerName == "" {
		opts.TLS = opts.TLS.Clone()
		opts.TLS.ServerName = s.Host
	}
	return &SMTP{server: s, opts: opts}, nil
}

// Server is where it sends (String() redacts the password).
func (c *SMTP) Server() Server { return c.server }

// Send sends m in one SMTP transaction. A 5xx answer and an invalid m are Permanent;
// a refused connection, a failed TLS handshake and a 4xx are not.
func (c *SMTP) Send(ctx context.Context, m Message) error {
	if err := m.Validate(); err != nil {
		return err
	}
	msg, err := build(m)
	if err != nil {
		return err
	}
	opts := []gomail.Option{gomail.WithPort(c.server.Port), gomail.WithTimeout(c.opts.Timeout), gomail.WithTLSConfig(c.opts.TLS)}
	if c.server.Implicit {
		opts = append(opts, gomail.WithSSL())
	} else {
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSOpportunistic))
	}
	if c.opts.HELO != "" {
		opts = append(opts, gomail.WithHELO(c.opts.HELO))
	}
	if c.server.User != "" {
		// The best mechanism the server offers; PLAIN and LOGIN only under TLS (or
		// to localhost), as go-mail enforces.
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover),
			gomail.WithUsername(c.server.User), gomail.WithPassword(c.server.Password))
	}
	client, err := gomail.NewClient(c.server.Host, opts...)
	if err != nil {
		return permanent{fmt.Errorf("smtp client for %s: %w", c.server, err)}
	}
	if err := client.DialAndSendWithContext(ctx, msg); err != nil {
		out := fmt.Errorf("smtp %s: %s", c.server, c.redact(err.Error()))
		if refused(err) {
			return permanent{out}
		}
		return out
	}
	return nil
}

// redact takes the password out of a library's error text, should it hold it.
func (c *SMTP) redact(s string) string {
	if c.server.Password == "" {
		return s
	}
	return strings.ReplaceAll(s, c.server.Password, "REDACTED")
}

// refused reports whether the server refused the mail for good: a 5xx reply.
func refused(err error) bool {
	var se *gomail.SendError
	if errors.As(err, &se) && !se.IsTemp() {
		code := se.ErrorCode()
		return code >= 500 && code < 600
	}
	return false
}

// build is m as go-mail's Msg: quoted-printable UTF-8 text, the HTML as its
// alternative, the threading headers and the extra ones.
func build(m Message) (*gomail.Msg, error) {
	msg := gomail.NewMsg(gomail.WithCharset(gomail.CharsetUTF8), gomail.WithEncoding(gomail.EncodingQP), gomail.WithNoDefaultUserAgent())
	if err := msg.From(m.From); err != nil {
		return nil, invalid("from: %v", err)
	}
	if err := msg.To(m.To); err != nil {
		return nil, invalid("to: %v", err)
	}
	msg.Subject(m.Subject)
	msg.SetMessageIDWithValue(m.MessageID)
	msg.SetDate()
	if m.InReplyTo != "" {
		msg.SetGenHeaderPreformatted(gomail.HeaderInReplyTo, "<"+m.InReplyTo+">")
	}
	if len(m.References) > 0 {
		msg.SetGenHeaderPreformatted(gomail.HeaderReferences, "<"+strings.Join(m.References, "> <")+">")
	}
	if m.Language != "" {
		msg.SetGenHeader(gomail.HeaderContentLang, m.Language)
	}
	msg.SetGenHeader("Auto-Submitted", "auto-generated")
	for k, v := range m.Headers {
		msg.SetGenHeader(gomail.Header(k), v)
	}
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	if m.HTML != "" {
		msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	}
	return msg, nil
}
