package webui

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/i18n"
	"github.com/berthhq/berth/internal/metrics"
)

func TestSafeNext(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{"", "/servers"},
		{"/billing?page=2", "/billing?page=2"},
		{"https://evil.example/", "/servers"},
		{"//evil.example/", "/servers"},
		{"/\\evil.example/", "/servers"},
		{"/signin?next=/x", "/servers"},
		{"billing", "/servers"},
		// What an outside test found: browsers follow these off-site.
		{"/\t/evil.example", "/servers"},
		{"/./\\evil.example", "/servers"},
		{"/.//evil.example", "/servers"},
		{"/a/..//evil.example", "/servers"},
		{"/\n/evil.example", "/servers"},
		{"/\r//evil.example", "/servers"},
		{"/ /evil.example", "/servers"},
		{"/\x00/evil.example", "/servers"},
		{"/\u0085/evil.example", "/servers"},
		{"/\u00a0/evil.example", "/servers"},
		{"/\xff", "/servers"},
		{"/%5Cevil.example", "/%5Cevil.example"}, // an escaped backslash stays a path on this site
		{"///evil.example", "/servers"},
		{"/x/../../evil.example", "/evil.example"},
		{"/./signin", "/servers"},
		{"/signin/", "/servers"},
		{"/signinx", "/signinx"},
		{"/servers/./7/../8", "/servers/8"},
		{"/servers/", "/servers/"},
		{"/billing?next=//evil.example", "/billing?next=//evil.example"},
		{"/billing?", "/billing?"},
		{"/", "/"},
		{"https:/evil.example", "/servers"},
		{"/" + strings.Repeat("a/", 2000), "/" + strings.Repeat("a/", 2000)},
	} {
		if got := safeNext(tt.in); got != tt.want {
			t.Errorf("safeNext(%q) = %q, want %q", tt.in, got, tt.want)
		}
		// What http.Redirect sends must be what safeNext answered, and on this site.
		w := httptest.NewRecorder()
		http.Redirect(w, httptest.NewRequest("GET", "/signin", nil), safeNext(tt.in), http.StatusSeeOther)
		loc := w.Header().Get("Location")
		if loc != safeNext(tt.in) {
			t.Errorf("safeNext(%q) = %q, but http.Redirect sends %q", tt.in, safeNext(tt.in), loc)
		}
		if u, err := url.Parse(loc); err != nil || u.Host != "" || strings.ContainsAny(loc, "\\\t\n\r") || strings.HasPrefix(loc, "//") {
			t.Errorf("safeNext(%q): Location %q leaves the site", tt.in, loc)
		}
	}
}

// TestFormatMoney: the console's one rule for money (formatMoney): at least two
// decimals, more only as far as the amount needs, up to four; the language's
// decimal separator.
func TestFormatMoney(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		m    hosting.Money
		lang string
		want string
	}{
		{1000000, "en", "100.00"},
		{125000, "en", "12.50"},
		{125000, "de", "12,50"},
		{100, "en", "0.01"},
		{50, "en", "0.005"},
		{60, "fr", "0,006"},
		{-70, "en", "-0.007"},
		{-70, "de", "-0,007"},
		{12345, "en", "1.2345"},
		{-12340, "en", "-1.234"},
		{-5, "en", "-0.0005"},
		{1, "en", "0.0001"},
		{123456789000, "en", "12345678.90"},
		{0, "en", "0.00"},
	} {
		if got := formatMoney(tt.m, tt.lang); got != tt.want {
			t.Errorf("formatMoney(%d, %s) = %q, want %q", tt.m, tt.lang, got, tt.want)
		}
	}
}

func TestTransient(t *testing.T) {
	t.Parallel()
	op := &hosting.Operation{Type: hosting.OpPower}
	for _, tt := range []struct {
		s    hosting.Server
		want bool
	}{
		{hosting.Server{Status: hosting.StatusRunning}, false},
		{hosting.Server{Status: hosting.StatusStopped}, false},
		{hosting.Server{Status: hosting.StatusError}, false},
		{hosting.Server{Status: hosting.StatusProvisioning}, true},
		{hosting.Server{Status: hosting.StatusStopping}, true},
		{hosting.Server{Status: hosting.StatusRunning, Operation: op}, true}, // a snapshot in progress
		{hosting.Server{Status: hosting.StatusRunning, Suspended: true}, false},
	} {
		if got := transient(tt.s); got != tt.want {
			t.Errorf("transient(%s, op %v, suspended %v) = %v", tt.s.Status, tt.s.Operation != nil, tt.s.Suspended, got)
		}
	}
}

func TestCSRFTokenIsPerSession(t *testing.T) {
	t.Parallel()
	a, b := csrfToken("berths_a"), csrfToken("berths_b")
	if a == b || a != csrfToken("berths_a") || strings.Contains(a, "berths_") {
		t.Fatalf("csrf tokens %q %q", a, b)
	}
}

func TestLineChart(t *testing.T) {
	t.Parallel()
	from, to := int64(1000), int64(1600)
	for _, tt := range []struct {
		name string
		maxY float64
		pts  []metrics.Point
		want string // the polyline's points; "" for none
	}{
		{"empty", 100, nil, ""},
		{"start and end", 100, []metrics.Point{{At: 1000, Value: 0}, {At: 1600, Value: 100}}, `points="0.0,160.0 600.0,0.0"`},
		{"middle, half", 100, []metrics.Point{{At: 1300, Value: 50}, {At: 1450, Value: 25}}, `points="300.0,80.0 450.0,120.0"`},
		{"above the top is clamped", 100, []metrics.Point{{At: 1000, Value: 150}, {At: 1600, Value: 0}}, `points="0.0,0.0 600.0,160.0"`},
		{"one sample shows as a short stroke", 100, []metrics.Point{{At: 1600, Value: 50}}, `points="600.0,80.0 596.0,80.0"`},
		{"auto scale leaves headroom", 0, []metrics.Point{{At: 1000, Value: 10}, {At: 1600, Value: 0}}, `points="0.0,14.5 600.0,160.0"`},
	} {
		got := string(lineChart("cpu", "CPU", from, to, tt.maxY, line{"a", tt.pts}))
		if !strings.HasPrefix(got, `<svg class="chart" data-chart="cpu"`) || !strings.Contains(got, `aria-label="CPU"`) {
			t.Errorf("%s: not a labelled chart: %s", tt.name, got)
		}
		switch {
		case tt.want == "" && strings.Contains(got, "<polyline"):
			t.Errorf("%s: a line without data: %s", tt.name, got)
		case tt.want != "" && !strings.Contains(got, tt.want):
			t.Errorf("%s: want %s in %s", tt.name, tt.want, got)
		}
	}
}

func TestBarChart(t *testing.T) {
	t.Parallel()
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	days := []hosting.DaySpend{{Day: day, Spent: 0}, {Day: day.AddDate(0, 0, 1), Spent: 20000}, {Day: day.AddDate(0, 0, 2), Spent: 10000}}
	got := string(barChart("spend", "Spend <30 days>", days, func(m hosting.Money) string { return m.String() + " EUR" }))
	for _, want := range []string{
		`aria-label="Spend &lt;30 days&gt;"`,
		`<title>2026-11-02: 2.0000 EUR</title>`,
		`y="2.0" width="140.0" height="158.0"`, // the highest bar fills the chart
		`y="81.0" width="140.0" height="79.0"`, // half of it
		`height="0.0"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("bar chart lacks %s: %s", want, got)
		}
	}
	if strings.Count(got, "<rect") != 3 {
		t.Errorf("want 3 bars: %s", got)
	}
}

// TestOpTypeText: each kind of operation the API's document lists (hosting.OpTypes)
// is named in words in every language of the console, German and French their own;
// the core's busy messages name it so too; a kind the console does not know is shown
// as it is.
func TestOpTypeText(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "..", "api", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, op := range hosting.OpTypes {
		kinds = append(kinds, string(op))
	}
	if want := "enum: [" + strings.Join(kinds, ", ") + "]"; !strings.Contains(string(doc), want) {
		t.Fatalf("api/openapi.yaml lists no operation types %s: hosting.OpTypes is not every kind", want)
	}
	c := &Console{cat: i18n.MustLoad()}
	for _, op := range hosting.OpTypes {
		en := c.opTypeText("en", op)
		for _, lang := range []string{"en", "de", "fr"} {
			got := c.opTypeText(lang, op)
			if got == "" || strings.Contains(got, "console.") || (lang != "en" && got == en) {
				t.Errorf("%s in %s: %q", op, lang, got)
			}
			for _, id := range []string{"error.busy", "error.volume_busy"} {
				if msg := c.text(lang, hosting.M(id, "operation", string(op))); !strings.Contains(msg, "("+got+")") {
					t.Errorf("%s in %s: %q does not name %q", id, lang, msg, got)
				}
			}
		}
	}
	if got := c.opTypeText("de", "teleport"); got != "teleport" {
		t.Errorf("an unknown kind is shown as %q", got)
	}
}

// TestRecordLines: the RRset editor's lines are values with an optional comment after
// the first ";" that no quote holds and no backslash escapes; blank lines are skipped.
func TestRecordLines(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want [][2]string // value, comment
	}{
		{"", nil},
		{"\n  \r\n", nil},
		{"192.0.2.1", [][2]string{{"192.0.2.1", ""}}},
		{"  192.0.2.1  ;  web  ", [][2]string{{"192.0.2.1", "web"}}},
		{"10 mail;primary\r\n20 backup", [][2]string{{"10 mail", "primary"}, {"20 backup", ""}}},
		{`"v=spf1; -all" ; spf`, [][2]string{{`"v=spf1; -all"`, "spf"}}},
		{`"a\"; b" ; c`, [][2]string{{`"a\"; b"`, "c"}}},
		{`a\;b ; c ; d`, [][2]string{{`a\;b`, "c ; d"}}},
		{"; only a comment", [][2]string{{"", "only a comment"}}},
		{`"unterminated ; x`, [][2]string{{`"unterminated ; x`, ""}}},
	} {
		got := recordLines(tt.in)
		if len(got) != len(tt.want) {
			t.Errorf("recordLines(%q): %d records, want %d", tt.in, len(got), len(tt.want))
			continue
		}
		for i, rec := range got {
			comment := ""
			if rec.Comment != nil {
				comment = *rec.Comment
			}
			if *rec.Value != tt.want[i][0] || comment != tt.want[i][1] {
				t.Errorf("recordLines(%q)[%d] = %q ; %q, want %q", tt.in, i, *rec.Value, comment, tt.want[i])
			}
		}
	}
}
