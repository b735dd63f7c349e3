package app

import (
	"errors"
	"fmt"
	netmail "net/mail"

	"github.com/berthhq/berth/internal/mail"
	"github.com/berthhq/berth/internal/ops"
)

// mailWorkers is how many mails one process sends at once (the mail queue,
// ops.MailQueue): each is a connection to the SMTP server.
const mailWorkers = 8

// MailConfig is how berthd sends mail (docs/operating.md, Mail).
type MailConfig struct {
	// SMTPURL is the SMTP server, smtp://user:password@host:port (STARTTLS when the
	// server offers it) or smtps://... (implicit TLS) (serve --smtp-url; "": none,
	// and each mail is written to the log instead). Its password is never logged.
	SMTPURL string
	// From is the sender of every mail (serve --mail-from; default
	// berth@<--public-url's host>).
	From string
	// Support is where new tickets and customers' messages are mailed (serve
	// --support-email; "": nowhere).
	Support string
	// LinkBase starts the links mails hold when PublicURL is unset (serve gives its
	// own address; default http://127.0.0.1:8080).
	LinkBase string
	// SMTP tunes the SMTP client (tests: a TLS configuration that trusts their
	// server).
	SMTP mail.SMTPOptions
}

// CheckMailConfig checks the addresses and the URL of c; its errors name the flag
// and never show the URL's password.
func CheckMailConfig(c MailConfig) error {
	if c.SMTPURL != "" {
		if _, err := mail.ParseURL(c.SMTPURL); err != nil {
			return fmt.Errorf("--smtp-url %s: %v", mail.RedactURL(c.SMTPURL), err)
		}
	}
	for _, f := range []struct{ flag, v string }{{"--mail-from", c.From}, {"--support-email", c.Support}} {
		if f.v == "" {
			continue
		}
		if _, err := netmail.ParseAddress(f.v); err != nil {
			return fmt.Errorf("%s %q: not a mail address (%v)", f.flag, f.v, err)
		}
	}
	return nil
}

// mailOptions are the core's mail settings: links start with --public-url.
func (a *App) mailOptions() ops.MailOptions {
	base := a.cfg.PublicURL
	if base == "" {
		base = a.cfg.Mail.LinkBase
	}
	return ops.MailOptions{From: a.cfg.Mail.From, Support: a.cfg.Mail.Support, LinkBase: base}
}

// mailSender is what the mail jobs send through: the SMTP server of --smtp-url, or
// the log.
func (a *App) mailSender() (mail.Sender, error) {
	c := a.cfg.Mail
	if err := CheckMailConfig(c); err != nil {
		return nil, err
	}
	if c.SMTPURL == "" {
		a.log.Warn("no --smtp-url: mail is written to this log, not sent (password-reset links included)")
		return mail.NewLog(a.log), nil
	}
	s, err := mail.NewSMTP(c.SMTPURL, c.SMTP)
	if err != nil {
		return nil, errors.New("--smtp-url: " + err.Error())
	}
	a.log.Info("mail goes through SMTP", "smtp", s.Server().String())
	return s, nil
}
