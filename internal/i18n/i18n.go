// Package i18n renders Berth's user-facing messages (API error messages above all) in
// the reader's language (docs/api.md, Errors): English, German and French, with English
// as the fallback for anything else.
//
// Messages live in embedded go-i18n catalogs (locales/<lang>.yaml): flat ids mapping to
// a text/template string, or to a {one, other} map for plurals. A Catalog is built once
// at start-up and is safe for concurrent use.
package i18n

import (
	"embed"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	goi18n "github.com/nicksnyder/go-i18n/v2/i18n"
	"golang.org/x/text/language"
	"sigs.k8s.io/yaml"
)

// Default is the fallback language: for unknown languages and for messages missing
// from another language's catalog.
const Default = "en"

// languages are the supported languages, default first. Each has locales/<lang>.yaml.
var languages = []string{"en", "de", "fr"}

//go:embed locales/*.yaml
var localeFS embed.FS

// matcher picks the best supported language for an Accept-Language header. Its tags
// are in the order of languages, so the index it returns indexes languages.
var matcher = language.NewMatcher([]language.Tag{language.English, language.German, language.French})

// Catalog holds the loaded messages of every supported language. Build it with Load;
// it is read-only afterwards and so safe for concurrent use.
type Catalog struct {
	bundle     *goi18n.Bundle
	localizers map[string]*goi18n.Localizer          // lang → localizer, built once
	messages   map[string]map[string]*goi18n.Message // lang → id → message, as parsed
	plural     map[string]bool                       // ids that have plural forms
	ids        []string                              // ids of the English catalog, sorted
}

// Load returns the embedded catalogs, parsed once for the process: a Catalog is
// never changed after it is made, so every server shares the one (the tests start
// thousands of servers; each parsed the catalogs anew).
func Load() (*Catalog, error) { return loadOnce() }

var loadOnce = sync.OnceValues(parse)

// parse parses the embedded catalogs into a new Catalog.
func parse() (*Catalog, error) {
	b := goi18n.NewBundle(language.English)
	b.RegisterUnmarshalFunc("yaml", unmarshalYAML)

	c := &Catalog{
		bundle:     b,
		localizers: make(map[string]*goi18n.Localizer, len(languages)),
		messages:   make(map[string]map[string]*goi18n.Message, len(languages)),
		plural:     make(map[string]bool),
	}
	for _, lang := range languages {
		path := "locales/" + lang + ".yaml"
		buf, err := localeFS.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("i18n: %w", err)
		}
		mf, err := b.ParseMessageFileBytes(buf, path)
		if err != nil {
			return nil, fmt.Errorf("i18n: parse %s: %w", path, err)
		}
		if got := mf.Tag.String(); got != lang {
			return nil, fmt.Errorf("i18n: %s: language tag %q, want %q", path, got, lang)
		}
		if len(mf.Messages) == 0 {
			return nil, fmt.Errorf("i18n: %s: no messages", path)
		}
		msgs := make(map[string]*goi18n.Message, len(mf.Messages))
		for _, m := range mf.Messages {
			if m.Other == "" {
				return nil, fmt.Errorf("i18n: %s: message %q has no text", path, m.ID)
			}
			msgs[m.ID] = m
			if m.Zero != "" || m.One != "" || m.Two != "" || m.Few != "" || m.Many != "" {
				c.plural[m.ID] = true
			}
		}
		c.messages[lang] = msgs
		c.localizers[lang] = goi18n.NewLocalizer(b, lang)
	}
	for id := range c.messages[Default] {
		c.ids = append(c.ids, id)
	}
	slices.Sort(c.ids)
	return c, nil
}

// MustLoad is Load that panics on error. The catalogs are embedded, so an error is a
// programming error that the tests catch.
func MustLoad() *Catalog {
	c, err := Load()
	if err != nil {
		panic(err)
	}
	return c
}

func unmarshalYAML(data []byte, v any) error {
	// Strict: a duplicated id is an error rather than a silent override.
	return yaml.UnmarshalStrict(data, v)
}

// T renders message id in lang with args as template data. An unknown language
// renders in English, and so does a message missing from lang's catalog; an id
// missing everywhere renders as the id itself. For plural messages (error.more_errors)
// args["count"] selects the plural form. T never panics.
func (c *Catalog) T(lang, id string, args map[string]any) (s string) {
	if c == nil {
		return id
	}
	defer func() {
		if recover() != nil {
			s = id
		}
	}()

	loc := c.localizer(lang)
	cfg := goi18n.LocalizeConfig{MessageID: id}
	if len(args) > 0 {
		cfg.TemplateData = args
	}
	if c.plural[id] {
		if n, ok := pluralCount(args["count"]); ok {
			cfg.PluralCount = n
		}
	}
	// On a message missing from lang, go-i18n answers with the English one along with a
	// MessageNotFoundErr; any text it returns is the best available.
	if msg, err := loc.Localize(&cfg); err == nil || msg != "" {
		return msg
	}
	if cfg.PluralCount != nil {
		cfg.PluralCount = nil
		if msg, err := loc.Localize(&cfg); err == nil || msg != "" {
			return msg
		}
	}
	if en := c.localizers[Default]; loc != en {
		if msg, err := en.Localize(&cfg); err == nil || msg != "" {
			return msg
		}
	}
	return id
}

// localizer returns the localizer for lang: an exact supported code, else its base
// language ("de-CH", "FR_fr"), else English.
func (c *Catalog) localizer(lang string) *goi18n.Localizer {
	if l, ok := c.localizers[lang]; ok {
		return l
	}
	base := lang
	if i := strings.IndexAny(base, "-_"); i >= 0 {
		base = base[:i]
	}
	if l, ok := c.localizers[strings.ToLower(base)]; ok {
		return l
	}
	return c.localizers[Default]
}

// pluralCount converts v to a type go-i18n accepts as a plural count.
func pluralCount(v any) (any, bool) {
	switch n := v.(type) {
	case int, int8, int16, int32, int64, string:
		return n, true
	case uint:
		return strconv.FormatUint(uint64(n), 10), true
	case uint8:
		return int64(n), true
	case uint16:
		return int64(n), true
	case uint32:
		return int64(n), true
	case uint64:
		return strconv.FormatUint(n, 10), true
	case float32:
		return pluralCount(float64(n))
	case float64:
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return nil, false
		}
		return strconv.FormatFloat(n, 'f', -1, 64), true
	}
	return nil, false
}

// Languages returns the supported language codes, English first.
func (c *Catalog) Languages() []string { return slices.Clone(languages) }

// IDs returns the ids of all messages in the English catalog, sorted.
func (c *Catalog) IDs() []string { return slices.Clone(c.ids) }

// Supported reports whether lang is exactly one of the supported language codes
// ("en", "de", "fr").
func Supported(lang string) bool { return slices.Contains(languages, lang) }

// MatchAcceptLanguage returns the supported language that best fits an
// Accept-Language header, or English when none fits or the header is empty or
// malformed.
func MatchAcceptLanguage(header string) string {
	if strings.TrimSpace(header) == "" {
		return Default
	}
	tags, _, err := language.ParseAcceptLanguage(header)
	if err != nil || len(tags) == 0 {
		return Default
	}
	_, i, conf := matcher.Match(tags...)
	if conf == language.No || i < 0 || i >= len(languages) {
		return Default
	}
	return languages[i]
}
