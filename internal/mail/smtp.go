package mail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
	"github.com/wneessen/go-mail/smtp"
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

var _ CommitSender = (*SMTP)(nil)

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
func (c *SMTP) Send(ctx context.Context, m Message) error { return c.SendCommit(ctx, m, nil) }

// SendCommit is Send, with commit called before DATA's final "." (CommitSender).
// go-mail dials, says EHLO, upgrades to TLS and authenticates; the transaction
// (MAIL, RCPT, DATA) is run here, as go-mail's own sending offers no point between
// the message written and its end.
func (c *SMTP) SendCommit(ctx context.Context, m Message, commit func() error) error {
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
	fail := func(err error) error {
		var ce errCommit
		if errors.As(err, &ce) {
			return ce.err
		}
		out := fmt.Errorf("smtp %s: %s", c.server, c.redact(err.Error()))
		if refused(err) || Permanent(err) {
			return permanent{out}
		}
		return out
	}
	sc, err := client.DialToSMTPClientWithContext(ctx)
	if err != nil {
		return fail(err)
	}
	// The transaction has the client's timeout from now (as go-mail's own sending
	// gives it), and ends with ctx.
	stop := context.AfterFunc(ctx, func() { _ = sc.Close() })
	defer stop()
	if commit != nil {
		// Past a commit the end is sent and its answer read whatever becomes of ctx
		// (a stop of berthd): within the timeout, the caller learns what the server
		// did with a mail it recorded.
		inner := commit
		commit = func() error {
			if err := inner(); err != nil {
				return err
			}
			stop()
			return nil
		}
	}
	err = sc.UpdateDeadline(c.opts.Timeout)
	if err == nil {
		err = transaction(sc, msg, commit)
	}
	if err != nil {
		_ = sc.Close()
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", err, ctx.Err())
		}
		return fail(err)
	}
	// The server holds the mail: a failed QUIT changes nothing of that.
	_ = client.CloseWithSMTPClient(sc)
	return nil
}

// transaction sends msg over sc: MAIL, RCPT, DATA and the message, then commit
// (when not nil), then DATA's end and the server's answer to it. A commit that fails
// leaves the end unsent (the caller closes the connection: the server drops the
// message) and is answered as it is.
func transaction(sc *smtp.Client, msg *gomail.Msg, commit func() error) error {
	from, err := msg.GetSender(false)
	if err != nil {
		return permanent{err}
	}
	to, err := msg.GetRecipients()
	if err != nil {
		return permanent{err}
	}
	if err := sc.Mail(from); err != nil {
		return err
	}
	for _, rcpt := range to {
		if err := sc.Rcpt(rcpt); err != nil {
			return err
		}
	}
	w, err := sc.Data()
	if err != nil {
		return err
	}
	if _, err := msg.WriteTo(w); err != nil {
		return err
	}
	if commit != nil {
		// The message goes out before the commit, so that past it only the end is
		// left to write: a process killed between the commit and that write has
		// recorded a mail the server never takes (no order of the two closes that
		// window; SMTP cannot tell a client whether a message came), and the window
		// is a few instructions, not a buffer's write.
		if err := sc.Text.W.Flush(); err != nil {
			return err
		}
		if err := commit(); err != nil {
			return errCommit{err}
		}
	}
	return w.Close()
}

// errCommit is a commit's error, answered by SendCommit as it is.
type errCommit struct{ err error }

func (e errCommit) Error() string { return e.err.Error() }
func (e errCommit) Unwrap() error { return e.err }

// redact takes the password out of a library's error text, should it hold it.
func (c *SMTP) redact(s string) string {
	if c.server.Password == "" {
		return s
	}
	return strings.ReplaceAll(s, c.server.Password, "REDACTED")
}

// refused reports whether the server refused the mail for good: a 5xx reply (to
// the transaction's commands, or as go-mail reports one of the connection's).
func refused(err error) bool {
	var te *textproto.Error
	if errors.As(err, &te) {
		return te.Code >= 500 && te.Code < 600
	}
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
