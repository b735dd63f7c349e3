package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	netmail "net/mail"
	"time"

	"github.com/berthhq/berth/internal/mail"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store"
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

// mailSetting is the store's setting under which serve records its mail settings, for
// the admin commands that mail (berthd admin ticket reply: the reply goes to the
// account holder), which run in processes of their own without serve's flags.
const mailSetting = "mail"

// storedMail is the setting's value: serve's --mail-from, --support-email and link
// base (--public-url, else its own address).
type storedMail struct {
	From     string `json:"from"`
	Support  string `json:"support"`
	LinkBase string `json:"link_base"`
}

// recordMail writes this serve's mail settings for other processes (StartWorkers).
func (a *App) recordMail(ctx context.Context) error {
	o := a.mailOptions()
	v, err := json.Marshal(storedMail{From: o.From, Support: o.Support, LinkBase: o.LinkBase})
	if err != nil {
		return err
	}
	if err := a.DB.PutSetting(ctx, mailSetting, string(v), time.Now()); err != nil {
		return fmt.Errorf("record the mail settings: %w", err)
	}
	return nil
}

// mailFromStore sets cfg's mail settings to those serve recorded, for a process
// without serve's flags (Config.MailFromStore): what it mails is then made as serve
// would make it. None recorded (serve never ran) leaves the defaults.
func mailFromStore(ctx context.Context, db interface {
	Setting(ctx context.Context, name string) (string, error)
}, cfg *Config) error {
	v, err := db.Setting(ctx, mailSetting)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	} else if err != nil {
		return fmt.Errorf("read the mail settings: %w", err)
	}
	var m storedMail
	if err := json.Unmarshal([]byte(v), &m); err != nil {
		return fmt.Errorf("read the mail settings: %w", err)
	}
	cfg.Mail.From, cfg.Mail.Support, cfg.Mail.LinkBase, cfg.PublicURL = m.From, m.Support, m.LinkBase, ""
	return nil
}
