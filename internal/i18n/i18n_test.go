package i18n

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// placeholderRE matches the only template action the catalogs may use: {{.name}}.
var placeholderRE = regexp.MustCompile(`\{\{\s*\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)

func load(t testing.TB) *Catalog {
	t.Helper()
	c, err := Load()
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return c
}

// forms returns every non-empty text of a message (all plural forms).
func forms(c *Catalog, lang, id string) []string {
	m := c.messages[lang][id]
	if m == nil {
		return nil
	}
	var out []string
	for _, s := range []string{m.Zero, m.One, m.Two, m.Few, m.Many, m.Other} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// placeholders returns the sorted set of {{.name}} placeholders over all forms of a
// message, and fails on any other template action.
func placeholders(t *testing.T, c *Catalog, lang, id string) []string {
	t.Helper()
	set := map[string]bool{}
	for _, s := range forms(c, lang, id) {
		for _, m := range placeholderRE.FindAllStringSubmatch(s, -1) {
			set[m[1]] = true
		}
		if rest := placeholderRE.ReplaceAllString(s, ""); strings.Contains(rest, "{{") || strings.Contains(rest, "}}") {
			t.Errorf("%s %s: template action other than {{.name}} in %q", lang, id, s)
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// sampleArgs gives every placeholder of id a value.
func sampleArgs(names []string) map[string]any {
	if len(names) == 0 {
		return nil
	}
	args := make(map[string]any, len(names))
	for _, n := range names {
		switch n {
		case "count":
			args[n] = 3
		case "max", "min", "seconds", "quota", "id":
			args[n] = 42
		default:
			args[n] = "x-" + n
		}
	}
	return args
}

func TestLoad(t *testing.T) {
	c := load(t)
	if got, want := c.Languages(), []string{"en", "de", "fr"}; !slices.Equal(got, want) {
		t.Errorf("Languages() = %v, want %v", got, want)
	}
	ids := c.IDs()
	if len(ids) == 0 {
		t.Fatal("IDs() is empty")
	}
	if !slices.IsSorted(ids) {
		t.Error("IDs() is not sorted")
	}
	for _, id := range []string{"error.not_found", "error.more_errors", "validation.required", "validation.integer_list"} {
		if !slices.Contains(ids, id) {
			t.Errorf("IDs() lacks %q", id)
		}
	}
	// IDs and Languages hand out copies.
	ids[0] = "mutated"
	if c.IDs()[0] == "mutated" {
		t.Error("IDs() exposes internal state")
	}
	MustLoad()
}

func TestCatalogsHaveSameIDs(t *testing.T) {
	c := load(t)
	en := slices.Sorted(maps.Keys(c.messages["en"]))
	for _, lang := range []string{"de", "fr"} {
		t.Run(lang, func(t *testing.T) {
			got := c.messages[lang]
			for _, id := range en {
				if _, ok := got[id]; !ok {
					t.Errorf("missing in %s: %s", lang, id)
				}
			}
			for id := range got {
				if _, ok := c.messages["en"][id]; !ok {
					t.Errorf("extra in %s (not in en): %s", lang, id)
				}
			}
		})
	}
}

func TestPlaceholdersMatch(t *testing.T) {
	c := load(t)
	for _, id := range c.IDs() {
		t.Run(id, func(t *testing.T) {
			want := placeholders(t, c, "en", id)
			for _, lang := range []string{"de", "fr"} {
				if got := placeholders(t, c, lang, id); !slices.Equal(got, want) {
					t.Errorf("%s placeholders %v, en has %v", lang, got, want)
				}
			}
		})
	}
}

func TestPluralFormsMatch(t *testing.T) {
	c := load(t)
	for _, id := range c.IDs() {
		for _, lang := range []string{"de", "fr"} {
			en, other := c.messages["en"][id], c.messages[lang][id]
			if other == nil {
				continue // reported by TestCatalogsHaveSameIDs
			}
			if (en.One != "") != (other.One != "") {
				t.Errorf("%s: en and %s disagree on being plural", id, lang)
			}
		}
	}
}

func TestEveryMessageRenders(t *testing.T) {
	c := load(t)
	for _, lang := range c.Languages() {
		for _, id := range c.IDs() {
			t.Run(lang+"/"+id, func(t *testing.T) {
				args := sampleArgs(placeholders(t, c, lang, id))
				got := c.T(lang, id, args)
				switch {
				case got == "" || got == id:
					t.Fatalf("T(%q, %q) = %q: not rendered", lang, id, got)
				case strings.Contains(got, "<no value>"):
					t.Errorf("T(%q, %q) = %q: missing value", lang, id, got)
				case strings.Contains(got, "{{") || strings.Contains(got, "}}"):
					t.Errorf("T(%q, %q) = %q: unexpanded template", lang, id, got)
				}
				for k, v := range args {
					if !strings.Contains(got, fmt.Sprint(v)) {
						t.Errorf("T(%q, %q) = %q: lacks %s=%v", lang, id, got, k, v)
					}
				}
				if lang != "en" && got == c.T("en", id, args) {
					// A translation identical to English is most likely a forgotten one.
					t.Errorf("T(%q, %q) = %q: same as English", lang, id, got)
				}
			})
		}
	}
}

func TestT(t *testing.T) {
	c := load(t)
	tests := []struct {
		lang, id string
		args     map[string]any
		want     string
	}{
		{"en", "error.not_found", nil, "Not found."},
		{"de", "error.not_found", nil, "Nicht gefunden."},
		{"fr", "error.internal", nil, "Erreur interne."},
		{"en", "error.missing_scope", map[string]any{"scope": "write"}, `This token lacks the scope "write".`},
		{"de", "error.missing_scope", map[string]any{"scope": "write"}, "Diesem Token fehlt der Scope „write“."},
		{"en", "validation.between_chars", map[string]any{"min": 8, "max": 128}, "Must be between 8 and 128 characters."},
		{"en", "validation.credit_too_low", map[string]any{"amount": "0.0119", "currency": "EUR"},
			"The credit is too low: ordering this plan needs at least 0.0119 EUR for one hour."},
		// Unknown languages fall back to English.
		{"es", "error.not_found", nil, "Not found."},
		{"", "error.not_found", nil, "Not found."},
		{"xx-garbage", "validation.required", nil, "This field is required."},
		{"es", "error.rate_limited", map[string]any{"seconds": 5}, "Too many requests; retry in 5 seconds."},
		// A region or odd case still finds the base language.
		{"de-CH", "error.internal", nil, "Interner Fehler."},
		{"FR", "error.internal", nil, "Erreur interne."},
		// An id missing everywhere renders as itself.
		{"en", "error.nope", nil, "error.nope"},
		{"de", "error.nope", map[string]any{"x": 1}, "error.nope"},
		{"es", "", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.lang+"/"+tt.id, func(t *testing.T) {
			if got := c.T(tt.lang, tt.id, tt.args); got != tt.want {
				t.Errorf("T(%q, %q, %v) = %q, want %q", tt.lang, tt.id, tt.args, got, tt.want)
			}
		})
	}
}

func TestTMissingInLanguageFallsBackToEnglish(t *testing.T) {
	c2 := load(t)
	// Add an English-only message to the bundle, as if de and fr lacked a translation.
	if _, err := c2.bundle.ParseMessageFileBytes([]byte("test.only_en: \"Only English.\"\n"), "en.yaml"); err != nil {
		t.Fatal(err)
	}
	for _, lang := range []string{"en", "de", "fr", "es"} {
		if got := c2.T(lang, "test.only_en", nil); got != "Only English." {
			t.Errorf("T(%q, test.only_en) = %q, want the English text", lang, got)
		}
	}
}

func TestTNeverPanics(t *testing.T) {
	c := load(t)
	var nilCat *Catalog
	if got := nilCat.T("en", "error.not_found", nil); got != "error.not_found" {
		t.Errorf("nil catalog: %q", got)
	}
	odd := []map[string]any{
		nil,
		{},
		{"count": "not a number"},
		{"count": 2.0},
		{"count": 1.5},
		{"count": uint64(1)},
		{"count": nil},
		{"count": []int{1}},
		{"max": map[string]int{"a": 1}},
	}
	for _, lang := range []string{"en", "de", "fr", "es"} {
		for _, id := range append(c.IDs(), "", "no.such.id") {
			for _, args := range odd {
				_ = c.T(lang, id, args)
			}
		}
	}
}

func TestMoreErrorsPlural(t *testing.T) {
	c := load(t)
	tests := []struct {
		lang  string
		count any
		want  string
	}{
		{"en", 1, " (and 1 more error)"},
		{"en", 3, " (and 3 more errors)"},
		{"de", 1, " (und 1 weiterer Fehler)"},
		{"de", 3, " (und 3 weitere Fehler)"},
		{"fr", 1, " (et 1 autre erreur)"},
		{"fr", 3, " (et 3 autres erreurs)"},
		// Other integer types and unknown languages work too.
		{"en", int64(1), " (and 1 more error)"},
		{"en", uint(3), " (and 3 more errors)"},
		{"en", 2.0, " (and 2 more errors)"},
		{"es", 1, " (and 1 more error)"},
		{"es", 12, " (and 12 more errors)"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%v", tt.lang, tt.count), func(t *testing.T) {
			got := c.T(tt.lang, "error.more_errors", map[string]any{"count": tt.count})
			if got != tt.want {
				t.Errorf("T(%q, error.more_errors, count=%v) = %q, want %q", tt.lang, tt.count, got, tt.want)
			}
		})
	}
}

func TestSupported(t *testing.T) {
	for lang, want := range map[string]bool{
		"en": true, "de": true, "fr": true,
		"": false, "es": false, "EN": false, "de-DE": false, "english": false,
	} {
		if got := Supported(lang); got != want {
			t.Errorf("Supported(%q) = %v, want %v", lang, got, want)
		}
	}
}

func TestMatchAcceptLanguage(t *testing.T) {
	tests := []struct{ header, want string }{
		{"", "en"},
		{"   ", "en"},
		{"de-CH,fr;q=0.5", "de"},
		{"es", "en"},
		{"garbage;;;q=x", "en"},
		{"!!!", "en"},
		{"*", "en"},
		{"en-US,en;q=0.9", "en"},
		{"en-GB", "en"},
		{"de", "de"},
		{"DE-at", "de"},
		{"fr-FR,fr;q=0.9,en;q=0.8", "fr"},
		{"fr-CA", "fr"},
		{"es,fr;q=0.8", "fr"},
		{"de;q=0.1,fr;q=0.9", "fr"},
		{"pt-BR,en;q=0.5", "en"},
		{"zh-Hans-CN", "en"},
	}
	for _, tt := range tests {
		t.Run(tt.header, func(t *testing.T) {
			if got := MatchAcceptLanguage(tt.header); got != tt.want {
				t.Errorf("MatchAcceptLanguage(%q) = %q, want %q", tt.header, got, tt.want)
			}
		})
	}
}

func TestConcurrentUse(t *testing.T) {
	c := load(t)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lang := c.Languages()[i%3]
			for j := range 200 {
				_ = c.T(lang, "error.more_errors", map[string]any{"count": j})
				_ = c.T(lang, "validation.action_state", map[string]any{"action": "reboot", "status": "off"})
				_ = MatchAcceptLanguage("de-CH,fr;q=0.5")
			}
		}()
	}
	wg.Wait()
}

func BenchmarkT(b *testing.B) {
	c := load(b)
	args := map[string]any{"action": "reboot", "status": "off"}
	b.ReportAllocs()
	for b.Loop() {
		_ = c.T("de", "validation.action_state", args)
	}
}

func BenchmarkMatchAcceptLanguage(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = MatchAcceptLanguage("de-CH,fr;q=0.5")
	}
}
