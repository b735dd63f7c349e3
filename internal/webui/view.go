package webui

import (
	"fmt"
	"html/template"
	"io/fs"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/berthhq/berth/internal/hosting"
)

// view is what every page template gets as its root: the layout's fields, the page's
// Data, and methods that render values in the reader's language. Inside range and
// with, templates reach it as $.
type view struct {
	r        *req
	Title    string
	Nav      string
	Data     any
	Flash    *flash
	Account  hosting.Account
	SignedIn bool
	CSRF     string
}

// Lang is the page's language.
func (v *view) Lang() string { return v.r.lang }

// T translates a message id with alternating key, value arguments.
func (v *view) T(id string, kv ...any) string { return v.r.T(id, kv...) }

// Money shows an amount with the currency, by formatMoney's rule: every amount the
// console shows goes through it (pages, charts, messages).
func (v *view) Money(m hosting.Money) string { return v.r.money(m) }

// money is view.Money for a handler: formatMoney's amount and the account's
// currency (EUR when it has none).
func (r *req) money(m hosting.Money) string {
	cur := r.p.Account.Currency
	if cur == "" {
		cur = "EUR"
	}
	return formatMoney(m, r.lang) + " " + cur
}

// MoneyPtr is Money for an optional amount ("—" when nil).
func (v *view) MoneyPtr(m *hosting.Money) string {
	if m == nil {
		return "—"
	}
	return v.Money(*m)
}

// formatMoney is the console's one rule for writing an amount: at least two
// decimals, and more only as far as the amount needs them, up to the four that
// hosting.Money holds — 100.00, 0.01, 0.005, -0.007, 1.2345 — so that a sub-cent
// price or charge is never rounded away, and no zero is written after its last
// significant decimal beyond the cents. The decimal separator is the language's (a
// comma in German and French); there is no thousands separator. view.Money adds
// the currency; every page, chart and message of the console shows money through it.
func formatMoney(m hosting.Money, lang string) string {
	s := m.String() // four decimals
	for strings.HasSuffix(s, "0") && len(s)-strings.IndexByte(s, '.') > 3 {
		s = s[:len(s)-1]
	}
	if lang == "de" || lang == "fr" {
		s = strings.Replace(s, ".", ",", 1)
	}
	return s
}

// When shows a time in UTC.
func (v *view) When(t time.Time) string { return when(t) }

func when(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

// WhenPtr shows an optional time, or the word for "never".
func (v *view) WhenPtr(t *time.Time) string {
	if t == nil {
		return v.T("console.never")
	}
	return v.When(*t)
}

// Status is a server status in words.
func (v *view) Status(s hosting.Status) string { return v.T("console.status." + string(s)) }

// OpType is an operation's kind in words (Console.opTypeText).
func (v *view) OpType(t hosting.OpType) string { return v.r.c.opTypeText(v.r.lang, t) }

// Transient reports whether a server's status is about to change by itself, so that
// the page polls it.
func (v *view) Transient(srv hosting.Server) bool { return transient(srv) }

func transient(srv hosting.Server) bool {
	if srv.Operation != nil {
		return true
	}
	switch srv.ShownStatus() {
	case hosting.StatusRunning, hosting.StatusStopped, hosting.StatusError, hosting.StatusSuspended:
		return false
	}
	return true
}

// Errs are the messages of a field in a form error map.
func (v *view) Errs(errs map[string][]string, field string) []string { return errs[field] }

// Str dereferences an optional string ("—" when nil).
func (v *view) Str(s *string) string {
	if s == nil || *s == "" {
		return "—"
	}
	return *s
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func urlQueryEscape(s string) string { return url.QueryEscape(s) }

// funcs are the template functions that need no reader.
var funcs = template.FuncMap{
	"int64": func(n int) int64 { return int64(n) },
	"eq64":  func(a int64, b *int64) bool { return b != nil && *b == a },
	"has": func(list []int64, x int64) bool {
		for _, y := range list {
			if y == x {
				return true
			}
		}
		return false
	},
	"gb": func(mb int) string {
		if mb%1024 == 0 {
			return strconv.Itoa(mb/1024) + " GB"
		}
		return strconv.FormatFloat(float64(mb)/1024, 'f', 1, 64) + " GB"
	},
	"add":      func(a, b int) int { return a + b },
	"scopeStr": func(sc hosting.Scopes) string { return strings.ReplaceAll(sc.String(), ",", ", ") },
	"str":      func(x any) string { return fmt.Sprint(x) },
}

// parsePages parses each page template with the layout around it.
func parsePages() (map[string]*template.Template, error) {
	base, err := template.New("").Funcs(funcs).ParseFS(templateFS, "templates/layout.html")
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	pages := map[string]*template.Template{}
	for _, n := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if name == "layout" {
			continue
		}
		t, err := base.Clone()
		if err != nil {
			return nil, err
		}
		if _, err := t.ParseFS(templateFS, n); err != nil {
			return nil, fmt.Errorf("console template %s: %w", n, err)
		}
		pages[name] = t
	}
	return pages, nil
}
