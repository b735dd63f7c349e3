package webui

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/berthhq/berth/internal/dnszone"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
)

// The Domains pages (docs/api.md, Domains): the account's DNS zones with the form
// that adds one, and each zone's page with its RRsets, the editor that sets a whole
// RRset, its TTL and its zone file. Every form works without JavaScript.

// domainRow is a zone as the list shows it.
type domainRow struct {
	hosting.Domain
	// RRsets counts them as the API does: with the operator's SOA and apex NS.
	RRsets int
}

func (c *Console) domainRow(d hosting.Domain) domainRow {
	return domainRow{Domain: d, RRsets: d.RRsetCount + c.svc.Domains.OperatorRRsets()}
}

func domainURL(id int64) string { return "/domains/" + itoa(id) }

// domainList is the Domains page: the zones and the add form.
type domainList struct {
	Rows        []domainRow
	Nameservers []string
	// What was entered, and what went wrong ("line N" errors of the zone file in Lines).
	Name, TTL, ZoneFile string
	Errors              map[string][]string
	Lines               []string
}

func (c *Console) domainList(r *req, status int, l *domainList) error {
	ds, err := c.svc.Domains.Domains(r.ctx(), r.p)
	if err != nil {
		return err
	}
	for _, d := range ds {
		l.Rows = append(l.Rows, c.domainRow(d))
	}
	l.Nameservers = c.svc.Domains.Nameservers()
	c.render(r, status, "domains", "console.nav.domains", "domains", l)
	return nil
}

func (c *Console) domainsPage(r *req) error { return c.domainList(r, http.StatusOK, &domainList{}) }

// createDomain adds a zone and goes to its page; what the rules refuse is shown with
// the form again.
func (c *Console) createDomain(r *req) error {
	l := &domainList{Name: strings.TrimSpace(r.FormValue("name")), TTL: strings.TrimSpace(r.FormValue("ttl")),
		ZoneFile: r.FormValue("zone_file")}
	in := ops.DomainCreate{Name: &l.Name, TTL: numberOf(l.TTL)}
	if strings.TrimSpace(l.ZoneFile) != "" {
		in.ZoneFile = &l.ZoneFile
	}
	d, err := c.svc.Domains.CreateDomain(r.ctx(), r.p, in)
	if hosting.ErrorCode(err) == hosting.CodeValidationFailed {
		l.Errors, l.Lines = c.fieldErrors(r.lang, err), c.lineErrors(r.lang, err)
		return c.domainList(r, http.StatusUnprocessableEntity, l)
	}
	return r.done(err, domainURL(d.ID), "console.domains.created", "name", d.Name)
}

// numberOf reads an optional whole number: nil when empty, 0 (out of every range the
// core allows) when not a number.
func numberOf(raw string) *int64 {
	if raw = strings.TrimSpace(raw); raw == "" {
		return nil
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		n = 0
	}
	return &n
}

// lineErrors are a zone file's errors, keyed "line N" (docs/api.md, Domains), as
// "Line N: message" in the order of the file, then those of the whole file.
func (c *Console) lineErrors(lang string, err error) []string {
	var he *hosting.Error
	if !errors.As(err, &he) {
		return nil
	}
	var out []string
	for _, f := range he.Order {
		n, isLine := strings.CutPrefix(f, "line ")
		if !isLine && f != "zone_file" {
			continue
		}
		for _, m := range he.Fields[f] {
			text := c.text(lang, m)
			if isLine {
				text = c.cat.T(lang, "console.domains.line", map[string]any{"line": n}) + ": " + text
			}
			out = append(out, text)
		}
	}
	return out
}

// ---- one zone ----

// rrsetRow is an RRset as the zone's page lists it.
type rrsetRow struct {
	dnszone.RRset
	// ReadOnly: the operator's SOA and apex NS.
	ReadOnly bool
	// Path is its own, for its delete page; Edit opens it in the editor.
	Path, Edit string
	// Occluded is the delegation it lies below, whose servers answer for it: it is
	// never served ("" when it is; dnszone.Occluded).
	Occluded string
}

// rrsetForm is the RRset editor: what is in it, and what the rules refused.
type rrsetForm struct {
	Name, Type, TTL, Records string
	Errors                   map[string][]string
}

// zonePageSize is how many RRsets a page of a zone shows: a zone may hold 5,000 of
// up to 100 records each, more than one page should carry.
const zonePageSize = 100

// zonePage is a zone's page.
type zonePage struct {
	D           domainRow
	Nameservers []string
	// Sets are the RRsets of the page shown: the filter's (Search, a part of their
	// names in any case; Type, one type or all), zonePageSize a page.
	Sets         []rrsetRow
	Search, Type string
	Matched      int // the RRsets the filter keeps, of every page
	Pager            // the filter kept in its links, which go to the RRsets' section
	Types        []dnszone.Type
	Editor       rrsetForm
	// The TTL form and the zone file import, as entered and refused.
	TTL        string
	TTLErrors  []string
	ZoneFile   string
	ZoneErrors []string
	Activity   string
}

func (c *Console) zoneOf(r *req) (hosting.Domain, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return hosting.Domain{}, err
	}
	return c.svc.Domains.Domain(r.ctx(), r.p, hosting.DomainRef{ID: id})
}

// showZone renders the path's zone; fill sets what a refused form leaves in it.
func (c *Console) showZone(r *req, status int, fill func(*zonePage)) error {
	d, err := c.zoneOf(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	p := &zonePage{D: c.domainRow(d), Nameservers: c.svc.Domains.Nameservers(), Types: dnszone.Types,
		Search: strings.TrimSpace(q.Get("search")), Type: strings.ToUpper(q.Get("rrtype")),
		TTL: strconv.Itoa(d.TTL), Editor: rrsetForm{Name: "@", Type: string(dnszone.TypeA)},
		Activity: activityQuery{Resource: "domain:" + itoa(d.ID)}.url(0)}
	page, err := pageParam(r)
	if err != nil {
		return err
	}
	// The service refuses a type no RRset can have (422 naming it).
	sets, err := c.svc.Domains.RRsets(r.ctx(), r.p, hosting.DomainRef{ID: d.ID}, "", p.Type)
	if err != nil {
		return err
	}
	if name, typ := q.Get("name"), q.Get("type"); r.Method == http.MethodGet && name != "" && typ != "" {
		for _, s := range sets {
			if s.Name == name && string(s.Type) == typ && !operatorSet(s) {
				p.Editor = editorOf(s)
			}
		}
	}
	// What a delegation hides is judged on the whole zone, not on what the filter
	// keeps.
	all := sets
	if p.Type != "" {
		if all, err = c.svc.Domains.RRsets(r.ctx(), r.p, hosting.DomainRef{ID: d.ID}, "", ""); err != nil {
			return err
		}
	}
	occluded := dnszone.Occluded(d.Name, all)
	if part := searchPart(p.Search, d.Name); part != "" {
		sets = slices.DeleteFunc(sets, func(s dnszone.RRset) bool { return !strings.Contains(s.Name, part) })
	}
	// A page past the last (its sets deleted since) shows the last.
	last := lastPage(len(sets), zonePageSize)
	p.Matched, p.Pager = len(sets), newPager(r, domainURL(d.ID), min(page, last), last, "#rrsets")
	// The editor's links keep the page and the filter.
	keep := url.Values{}
	for _, k := range []string{"search", "rrtype", "page"} {
		if v := q.Get(k); v != "" {
			keep.Set(k, v)
		}
	}
	for _, s := range sets[(p.Page-1)*zonePageSize : min(len(sets), p.Page*zonePageSize)] {
		p.Sets = append(p.Sets, rrsetRow{RRset: s, ReadOnly: operatorSet(s), Occluded: occluded[s.Name+" "+string(s.Type)],
			Path: rrsetURL(d.ID, s.Name, string(s.Type)), Edit: editURL(d.ID, s.Name, string(s.Type), keep)})
	}
	if fill != nil {
		fill(p)
	}
	c.render(r, status, "domain", "console.domains.one", "domains", p)
	return nil
}

// searchPart is what the zone page's search looks for in the RRsets' names, which
// are relative to the zone (@ its apex): the search in lower case, a name of the
// zone written whole made relative ("www.example.com." is "www").
func searchPart(search, zone string) string {
	part := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(search)), ".")
	switch {
	case part == zone:
		return dnszone.Apex
	case strings.HasSuffix(part, "."+zone):
		return strings.TrimSuffix(part, "."+zone)
	}
	return part
}

// operatorSet reports whether an RRset is the operator's: the SOA and the apex NS.
func operatorSet(s dnszone.RRset) bool {
	return s.Type == dnszone.TypeSOA || (s.Type == dnszone.TypeNS && s.Name == dnszone.Apex)
}

func rrsetURL(id int64, name, typ string) string {
	return domainURL(id) + "/rrsets/" + url.PathEscape(name) + "/" + url.PathEscape(typ)
}

// editURL opens an RRset in the editor of its zone's page, with the page's other
// parameters (keep: its filter and page).
func editURL(id int64, name, typ string, keep url.Values) string {
	q := url.Values{"name": {name}, "type": {typ}}
	for k, v := range keep {
		q[k] = v
	}
	return domainURL(id) + "?" + q.Encode() + "#editor"
}

// editorOf is the editor filled with an RRset: one record a line, "value ; comment".
func editorOf(s dnszone.RRset) rrsetForm {
	f := rrsetForm{Name: s.Name, Type: string(s.Type)}
	if s.TTL != nil {
		f.TTL = strconv.Itoa(*s.TTL)
	}
	lines := make([]string, len(s.Records))
	for i, rec := range s.Records {
		lines[i] = rec.Value
		if rec.Comment != "" {
			lines[i] += " ; " + rec.Comment
		}
	}
	f.Records = strings.Join(lines, "\n")
	return f
}

func (c *Console) domainPage(r *req) error { return c.showZone(r, http.StatusOK, nil) }

// recordLines reads the editor's records: one a line, blank lines skipped, each a
// value and an optional comment after the first ";" outside quotes (the zone file's
// comment, docs/api.md, Domains).
func recordLines(text string) []ops.RecordInput {
	var out []ops.RecordInput
	for _, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		value, comment := splitComment(line)
		if value == "" && comment == "" {
			continue
		}
		rec := ops.RecordInput{Value: &value}
		if comment != "" {
			rec.Comment = &comment
		}
		out = append(out, rec)
	}
	return out
}

// splitComment cuts a line at its first ";" that no quote holds and no backslash
// escapes, and trims both parts.
func splitComment(line string) (string, string) {
	quoted, escaped := false, false
	for i, ch := range line {
		switch {
		case escaped:
			escaped = false
		case ch == '\\':
			escaped = true
		case ch == '"':
			quoted = !quoted
		case ch == ';' && !quoted:
			return strings.TrimSpace(line[:i]), strings.TrimSpace(line[i+1:])
		}
	}
	return strings.TrimSpace(line), ""
}

// putRRset creates or replaces an RRset from the editor. A name the zone cannot hold
// is refused on its field here: the core takes one outside the zone for a path that
// names no RRset (404).
func (c *Console) putRRset(r *req) error {
	d, err := c.zoneOf(r)
	if err != nil {
		return err
	}
	f := rrsetForm{Name: strings.TrimSpace(r.FormValue("name")), Type: r.FormValue("type"),
		TTL: strings.TrimSpace(r.FormValue("ttl")), Records: r.FormValue("records")}
	if _, err = dnszone.OwnerName(d.Name, f.Name); err == nil {
		records := recordLines(f.Records)
		if records == nil {
			records = []ops.RecordInput{}
		}
		var set dnszone.RRset
		set, _, err = c.svc.Domains.PutRRset(r.ctx(), r.p, hosting.DomainRef{ID: d.ID}, f.Name, f.Type, numberOf(f.TTL), records)
		if err == nil {
			return r.done(nil, domainURL(d.ID)+"#rrsets", "console.domains.rrset_saved", "rrset", set.Name+" "+string(set.Type))
		}
	}
	if hosting.ErrorCode(err) != hosting.CodeValidationFailed {
		return r.done(err, domainURL(d.ID), "")
	}
	f.Errors = c.fieldErrors(r.lang, err)
	return c.showZone(r, http.StatusUnprocessableEntity, func(p *zonePage) { p.Editor = f })
}

func (c *Console) deleteRRsetPage(r *req) error {
	d, err := c.zoneOf(r)
	if err != nil {
		return err
	}
	s, err := c.svc.Domains.RRset(r.ctx(), r.p, hosting.DomainRef{ID: d.ID}, r.PathValue("name"), r.PathValue("type"))
	if err != nil {
		return err
	}
	c.render(r, http.StatusOK, "rrsetdelete", "console.domains.rrset_delete_title", "domains", map[string]any{
		"D": d, "S": s, "Path": rrsetURL(d.ID, s.Name, string(s.Type)), "ReadOnly": operatorSet(s)})
	return nil
}

func (c *Console) deleteRRset(r *req) error {
	d, err := c.zoneOf(r)
	if err != nil {
		return err
	}
	name, typ := r.PathValue("name"), r.PathValue("type")
	err = c.svc.Domains.DeleteRRset(r.ctx(), r.p, hosting.DomainRef{ID: d.ID}, name, typ)
	return r.done(err, domainURL(d.ID)+"#rrsets", "console.domains.rrset_deleted", "rrset", name+" "+strings.ToUpper(typ))
}

// setDomainTTL changes the zone's TTL; a refused one is shown on its field.
func (c *Console) setDomainTTL(r *req) error {
	d, err := c.zoneOf(r)
	if err != nil {
		return err
	}
	raw := strings.TrimSpace(r.FormValue("ttl"))
	_, err = c.svc.Domains.SetDomainTTL(r.ctx(), r.p, hosting.DomainRef{ID: d.ID}, numberOf(raw))
	if hosting.ErrorCode(err) == hosting.CodeValidationFailed {
		msgs := c.messages(r.lang, err)
		return c.showZone(r, http.StatusUnprocessableEntity, func(p *zonePage) { p.TTL, p.TTLErrors = raw, msgs })
	}
	return r.done(err, domainURL(d.ID), "console.saved")
}

// zoneFile sends the zone as BIND text, to be saved as <zone>.zone.
func (c *Console) zoneFile(r *req) error {
	d, err := c.zoneOf(r)
	if err != nil {
		return err
	}
	text, err := c.svc.Domains.ZoneFile(r.ctx(), r.p, hosting.DomainRef{ID: d.ID})
	if err != nil {
		return err
	}
	h := r.w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="`+d.Name+`.zone"`)
	_, err = io.WriteString(r.w, text)
	return err
}

// importZoneFile replaces the zone's RRsets with a zone file's, from the upload if
// one was chosen, else from the text area. A refused file stays in the text area
// with its errors by line.
func (c *Console) importZoneFile(r *req) error {
	d, err := c.zoneOf(r)
	if err != nil {
		return err
	}
	text, err := zoneFileOf(r)
	if err == nil {
		_, err = c.svc.Domains.ImportZoneFile(r.ctx(), r.p, hosting.DomainRef{ID: d.ID}, text)
	}
	if hosting.ErrorCode(err) == hosting.CodeValidationFailed {
		lines := c.lineErrors(r.lang, err)
		if len(lines) == 0 {
			lines = c.messages(r.lang, err)
		}
		return c.showZone(r, http.StatusUnprocessableEntity, func(p *zonePage) { p.ZoneFile, p.ZoneErrors = text, lines })
	}
	return r.done(err, domainURL(d.ID), "console.domains.imported")
}

// zoneFileOf is the zone file a form sends, at most dnszone.MaxZoneFileBytes of
// UTF-8: its upload's content when there is one, else its text area's.
func zoneFileOf(r *req) (string, error) {
	text := r.FormValue("zone_file")
	file, _, err := r.FormFile("zone_file_upload")
	switch {
	case err == nil:
		defer file.Close()
		b, err := io.ReadAll(io.LimitReader(file, dnszone.MaxZoneFileBytes+1))
		if err != nil {
			return "", err
		}
		if len(b) > 0 {
			text = string(b)
		}
	case !errors.Is(err, http.ErrMissingFile) && !errors.Is(err, http.ErrNotMultipart):
		return "", err
	}
	if len(text) > dnszone.MaxZoneFileBytes {
		return "", hosting.Invalid("zone_file", "validation.dns_zone_file_size", "max", dnszone.MaxZoneFileBytes)
	}
	if !utf8.ValidString(text) {
		return "", hosting.Invalid("zone_file", "validation.invalid_utf8")
	}
	return text, nil
}

func (c *Console) deleteDomainPage(r *req) error {
	d, err := c.zoneOf(r)
	if err != nil {
		return err
	}
	c.render(r, http.StatusOK, "domaindelete", "console.domains.delete_title", "domains", c.domainRow(d))
	return nil
}

func (c *Console) deleteDomain(r *req) error {
	d, err := c.zoneOf(r)
	if err != nil {
		return err
	}
	err = c.svc.Domains.DeleteDomain(r.ctx(), r.p, hosting.DomainRef{ID: d.ID})
	return r.done(err, "/domains", "console.domains.deleted", "name", d.Name)
}

// RecordTTL shows an RRset's TTL, or that it is the zone's.
func (v *view) RecordTTL(s dnszone.RRset, zone int) string {
	if s.TTL == nil {
		return v.T("console.domains.zone_ttl", "ttl", zone)
	}
	return strconv.Itoa(*s.TTL)
}

// IsType reports whether the editor's type is t.
func (f rrsetForm) IsType(t dnszone.Type) bool { return strings.EqualFold(f.Type, string(t)) }
