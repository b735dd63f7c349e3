package mail_test

import (
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/mail"
)

// samples are a Data of every kind, with values a test finds again.
func samples() []mail.Data {
	return []mail.Data{
		mail.PasswordReset{Email: "anna@example.com", Link: "https://berth.example/password-reset/tok3n", ValidMinutes: 60},
		mail.CreditLow{Email: "anna@example.com", Credit: "2.40 EUR", Days: 7, BillingURL: "https://berth.example/billing"},
		mail.Suspended{Email: "anna@example.com", Credit: "-0.10 EUR", BillingURL: "https://berth.example/billing"},
		mail.WebhookDisabled{Email: "anna@example.com", WebhookURL: "https://hooks.example/in", Reason: "failing",
			SettingsURL: "https://berth.example/settings/webhooks/3"},
		mail.TicketReply{TicketID: 42, Subject: "Disk full", Author: "Sam from Support", Body: "Try <b>resize</b> & reboot.",
			URL: "https://berth.example/support/42"},
		mail.TicketToSupport{TicketID: 42, Subject: "Disk full\r\nBcc: x@example.com", AccountID: 7, AccountEmail: "anna@example.com",
			Body: "<script>alert(1)</script>", New: true, URL: "https://berth.example/staff/tickets/42"},
	}
}

func TestRenderEveryKindInEveryLanguage(t *testing.T) {
	t.Parallel()
	if len(samples()) != len(mail.Kinds) {
		t.Fatalf("%d samples for %d kinds", len(samples()), len(mail.Kinds))
	}
	for _, d := range samples() {
		en, err := mail.Render("en", d)
		if err != nil {
			t.Fatalf("%s en: %v", d.Kind(), err)
		}
		for _, lang := range []string{"en", "de", "fr"} {
			c, err := mail.Render(lang, d)
			if err != nil {
				t.Fatalf("%s %s: %v", d.Kind(), lang, err)
			}
			where := d.Kind() + "/" + lang
			if c.Subject == "" || strings.ContainsAny(c.Subject, "\r\n") {
				t.Errorf("%s: subject %q: want one line", where, c.Subject)
			}
			for _, s := range []string{c.Text, c.HTML} {
				if strings.Contains(s, "<no value>") || strings.Contains(s, "mail.") {
					t.Errorf("%s: unrendered text in %q", where, s)
				}
			}
			if !strings.Contains(c.HTML, `<html lang="`+lang+`">`) {
				t.Errorf("%s: html lang", where)
			}
			if lang != "en" && (c.Text == en.Text || c.HTML == en.HTML) {
				t.Errorf("%s: same body as English", where)
			}
			// Each link and value is in both bodies.
			for _, want := range wanted(d) {
				if !strings.Contains(c.Text, want) {
					t.Errorf("%s: text lacks %q:\n%s", where, want, c.Text)
				}
			}
		}
	}
}

// wanted are the values of d its text body must show as they are.
func wanted(d mail.Data) []string {
	switch d := d.(type) {
	case mail.PasswordReset:
		return []string{d.Link, d.Email, "60"}
	case mail.CreditLow:
		return []string{d.Credit, d.BillingURL, d.Email}
	case mail.Suspended:
		return []string{d.Credit, d.BillingURL}
	case mail.WebhookDisabled:
		return []string{d.WebhookURL, d.SettingsURL}
	case mail.TicketReply:
		return []string{d.Body, d.Author, d.URL, "42"}
	case mail.TicketToSupport:
		return []string{d.Body, d.AccountEmail, d.URL, "42"}
	}
	return nil
}

func TestRenderEscapesHTMLButNotText(t *testing.T) {
	t.Parallel()
	c, err := mail.Render("en", mail.TicketToSupport{TicketID: 1, Subject: "<i>x</i>", AccountEmail: "a@example.com",
		Body: `<script>alert("x")</script> & <a href="javascript:alert(1)">y</a>`, URL: "javascript:alert(1)"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(c.HTML, "<script>") || strings.Contains(c.HTML, `href="javascript:`) {
		t.Errorf("html not escaped:\n%s", c.HTML)
	}
	if !strings.Contains(c.HTML, "&lt;script&gt;") || !strings.Contains(c.HTML, "#ZgotmplZ") {
		t.Errorf("html: want the body escaped and the javascript: URL defused:\n%s", c.HTML)
	}
	if !strings.Contains(c.Text, `<script>alert("x")</script> & `) {
		t.Errorf("text altered: %q", c.Text)
	}
}

func TestRenderSubjects(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		lang string
		d    mail.Data
		want string
	}{
		{"de", mail.PasswordReset{}, "Ihr Berth-Passwort zurücksetzen"},
		{"fr", mail.Suspended{}, "Vos serveurs Berth ont été suspendus"},
		{"xx", mail.Suspended{}, "Your Berth servers were suspended"},
		{"de", mail.TicketReply{TicketID: 9, Subject: "Hilfe"}, "Re: [#9] Hilfe"},
		{"en", mail.TicketToSupport{TicketID: 9, Subject: "a\nb", New: true}, "[#9] New ticket: a b"},
		{"en", mail.TicketToSupport{TicketID: 9, Subject: "Help"}, "Re: [#9] Help"},
	} {
		got, err := mail.Render(c.lang, c.d)
		if err != nil || got.Subject != c.want {
			t.Errorf("%s %s: %q, %v; want %q", c.d.Kind(), c.lang, got.Subject, err, c.want)
		}
	}
}
