package mail

import (
	"embed"
	"fmt"
	htmltemplate "html/template"
	"strings"
	"sync"
	texttemplate "text/template"

	"github.com/berthhq/berth/internal/i18n"
)

// Berth's mails: one Data type per kind, rendered by Render in the reader's
// language (en, de, fr) as a subject, a text body and an HTML body. The words are in
// the i18n catalogs (internal/i18n/locales, ids mail.<kind>.*), the layout in
// templates/<kind>.txt and .html: text/template for the subject and the text,
// html/template (every value escaped) for the HTML.

// Data is what a mail of one kind says; Render renders it.
type Data interface {
	// Kind names its templates: templates/<kind>.txt and templates/<kind>.html.
	Kind() string
}

// PasswordReset is the mail of a password reset asked for on the sign-in page.
type PasswordReset struct {
	Email string
	// Link is <public-url>/password-reset/<token>; it works once, for ValidMinutes.
	Link         string
	ValidMinutes int
}

// CreditLow warns that an account's credit lasts less than a few days more
// (billing.credit_low).
type CreditLow struct {
	Email string
	// Credit is what is left, with its currency ("2.40 EUR").
	Credit string
	// Days is the threshold it is under (hosting.CreditLowDays).
	Days int
	// BillingURL is the console's billing page.
	BillingURL string
}

// Suspended tells that an account's servers were suspended for exhausted credit
// (account.suspended).
type Suspended struct {
	Email      string
	Credit     string
	BillingURL string
}

// WebhookDisabled tells that a webhook was disabled (webhook.disabled): Reason is
// hosting.WebhookFailing or hosting.WebhookGone.
type WebhookDisabled struct {
	Email      string
	WebhookURL string
	Reason     string
	// SettingsURL is the webhook's console page, where it is enabled again.
	SettingsURL string
}

// TicketReply tells the account holder that staff answered a ticket. Body is the
// staff reply's text (never an internal note: the caller mails only replies).
type TicketReply struct {
	TicketID int64
	Subject  string
	Author   string
	Body     string
	// URL is the ticket's page in the console.
	URL string
}

// TicketToSupport tells --support-email of a new ticket (New) or of a customer's
// message on one. Body is the customer's text.
type TicketToSupport struct {
	TicketID     int64
	Subject      string
	AccountID    int64
	AccountEmail string
	Body         string
	New          bool
	// URL is the ticket's page in the staff console.
	URL string
}

func (PasswordReset) Kind() string   { return "password_reset" }
func (CreditLow) Kind() string       { return "credit_low" }
func (Suspended) Kind() string       { return "suspended" }
func (WebhookDisabled) Kind() string { return "webhook_disabled" }
func (TicketReply) Kind() string     { return "ticket_reply" }
func (TicketToSupport) Kind() string { return "ticket_to_support" }

// Kinds are the kinds of every Data, one each.
var Kinds = []Data{PasswordReset{}, CreditLow{}, Suspended{}, WebhookDisabled{}, TicketReply{}, TicketToSupport{}}

// Content is a rendered mail.
type Content struct {
	Subject, Text, HTML string
}

//go:embed templates/*
var templateFS embed.FS

type templates struct {
	text map[string]*texttemplate.Template
	html map[string]*htmltemplate.Template
}

// parsed parses the templates once; each is executed with its language's T.
var parsed = sync.OnceValues(func() (*templates, error) {
	t := &templates{text: map[string]*texttemplate.Template{}, html: map[string]*htmltemplate.Template{}}
	stub := map[string]any{"T": func(string, ...any) string { return "" }}
	for _, d := range Kinds {
		k := d.Kind()
		tt, err := texttemplate.New(k+".txt").Funcs(stub).ParseFS(templateFS, "templates/"+k+".txt")
		if err != nil {
			return nil, err
		}
		ht, err := htmltemplate.New("layout.html").Funcs(stub).ParseFS(templateFS, "templates/layout.html", "templates/"+k+".html")
		if err != nil {
			return nil, err
		}
		t.text[k], t.html[k] = tt, ht
	}
	return t, nil
})

// Render renders d in lang (English for a language Berth does not speak). Its
// errors are a template's, which the tests of every kind in every language rule out.
func Render(lang string, d Data) (Content, error) {
	cat, err := i18n.Load()
	if err != nil {
		return Content{}, err
	}
	t, err := parsed()
	if err != nil {
		return Content{}, err
	}
	if !i18n.Supported(lang) {
		lang = i18n.Default
	}
	tr := func(id string, kv ...any) string {
		args := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			args[fmt.Sprint(kv[i])] = kv[i+1]
		}
		return cat.T(lang, id, args)
	}
	funcs := map[string]any{"T": tr}
	k := d.Kind()
	tt, ok := t.text[k]
	if !ok {
		return Content{}, fmt.Errorf("mail: no templates of kind %q", k)
	}
	var subj, text, html strings.Builder
	tt, err = tt.Clone()
	if err != nil {
		return Content{}, err
	}
	tt.Funcs(funcs)
	if err := tt.ExecuteTemplate(&subj, "subject", d); err != nil {
		return Content{}, err
	}
	if err := tt.ExecuteTemplate(&text, "body", d); err != nil {
		return Content{}, err
	}
	ht, err := t.html[k].Clone()
	if err != nil {
		return Content{}, err
	}
	ht.Funcs(funcs)
	if err := ht.ExecuteTemplate(&html, "layout", map[string]any{"Lang": lang, "D": d}); err != nil {
		return Content{}, err
	}
	// A subject is one line, whatever its data held (a ticket's subject is the
	// customer's): a line break would be a header injection, which Validate refuses.
	return Content{Subject: strings.Join(strings.Fields(subj.String()), " "), Text: strings.TrimLeft(text.String(), "\n"), HTML: html.String()}, nil
}
