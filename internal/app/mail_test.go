package app_test

import (
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/app"
)

// TestCheckMailConfig: serve's mail flags are checked before anything starts; an
// error names the flag and never shows the SMTP password.
func TestCheckMailConfig(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cfg  app.MailConfig
		want string // "" for none
	}{
		{app.MailConfig{}, ""},
		{app.MailConfig{SMTPURL: "smtps://u:s3cret@mail.example.com", From: "Hosting <noreply@example.com>", Support: "help@example.com"}, ""},
		{app.MailConfig{SMTPURL: "http://u:s3cret@mail.example.com"}, "--smtp-url http://REDACTED@mail.example.com: scheme"},
		{app.MailConfig{SMTPURL: "smtp://u:s3cret@mail.example.com:0"}, "--smtp-url smtp://REDACTED@mail.example.com:0: port"},
		{app.MailConfig{SMTPURL: "smtp://u:s3c ret%zz@mail.example.com"}, "--smtp-url smtp://REDACTED@mail.example.com: not a URL"},
		{app.MailConfig{From: "not an address"}, `--mail-from "not an address"`},
		{app.MailConfig{Support: "a@b, c@d"}, `--support-email "a@b, c@d"`},
	} {
		err := app.CheckMailConfig(c.cfg)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v", c.cfg, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%+v: %v, want %q...", c.cfg, err, c.want)
		case err != nil && strings.Contains(err.Error(), "s3c"):
			t.Errorf("the error shows the password: %v", err)
		}
	}
}
