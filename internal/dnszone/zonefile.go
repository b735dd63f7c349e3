package dnszone

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/miekg/dns"

	"github.com/berthhq/berth/internal/hosting"
)

// ParseZoneFile reads a zone file (BIND text) for zone (a canonical zone name) whose
// TTL is ttl, and returns its RRsets canonical, in the order their first records come
// in the text. The text's $ORIGIN starts as the zone; $TTL, $ORIGIN and $GENERATE are
// honoured, $INCLUDE is refused. The SOA and the NS records at the apex are ignored
// (they are the operator's). Records of one name and type make one RRset, whose TTL
// is nil when it is ttl (the zone's) and the TTL otherwise; a record's comment (after
// ";") becomes its Comment.
//
// Every rule of CanonicalRRset and CheckZone applies. The errors are all reported at
// once, each keyed "line N", N the line (from 1) where the record starts, in line
// order: a line the parser cannot read (validation.dns_line_syntax, with the token it
// stopped at; reading resumes on the next line, with the zone as $ORIGIN and ttl as
// $TTL), a class other than IN (dns_line_class), a record whose name, type, TTL or
// value breaks a rule (the message of that rule; a value's is dns_value_*), records of
// one RRset with different TTLs (dns_line_ttl_mismatch), a record repeating an
// earlier line's (dns_line_duplicate, first = that line). Reading stops at the
// 101st problem: the first 100 are reported, and one more error, on "zone_file",
// says the rest of the file was not checked (validation.dns_zone_file_more), so that
// 256 KiB of garbage costs little and answers little. A text
// over 256 KiB (validation.dns_zone_file_size) or producing over 65,536 records
// (dns_zone_file_records) is refused on "zone_file".
func ParseZoneFile(zone string, ttl int, text string) ([]RRset, error) {
	if len(text) > MaxZoneFileBytes {
		return nil, invalid("zone_file", hosting.M("validation.dns_zone_file_size", "max", MaxZoneFileBytes))
	}
	var (
		problems []lineProblem
		sets     []RRset
		firstRec [][]int // per set, per record: its line
		index    = map[[2]string]int{}
		count    int
	)
	r := &lineReader{s: text, line: 1}
	// full: more problems than are reported were found; reading stops there.
	full := func() bool { return len(problems) > MaxLineErrors }
	for !full() {
		base := r.line - 1 // the new parser counts lines from 1
		zp := dns.NewZoneParser(r, zone+".", "")
		zp.SetDefaultTTL(uint32(ttl))
		for rr, ok := zp.Next(); ok && !full(); rr, ok = zp.Next() {
			line := r.start
			if count++; count > MaxZoneFileRecords {
				return nil, invalid("zone_file", hosting.M("validation.dns_zone_file_records", "max", MaxZoneFileRecords))
			}
			set, rec, msg := recordOf(zone, ttl, rr, zp.Comment())
			if msg != nil {
				problems = append(problems, lineProblem{line, *msg})
				continue
			}
			if set.Name == "" {
				continue // the SOA or an apex NS
			}
			key := [2]string{set.Name, string(set.Type)}
			i, ok := index[key]
			if !ok {
				i = len(sets)
				index[key] = i
				sets = append(sets, set)
				firstRec = append(firstRec, nil)
			}
			s := &sets[i]
			switch {
			case !equalTTL(s.TTL, set.TTL):
				problems = append(problems, lineProblem{line, hosting.M("validation.dns_line_ttl_mismatch",
					"ttl", effTTL(set.TTL, ttl), "other", effTTL(s.TTL, ttl), "first", firstRec[i][0])})
				continue
			case len(s.Records) == MaxRecords:
				problems = append(problems, lineProblem{line, hosting.M("validation.dns_records_many", "max", MaxRecords, "count", MaxRecords+1)})
				continue
			}
			if j := slices.IndexFunc(s.Records, func(x Record) bool { return x.Value == rec.Value }); j >= 0 {
				problems = append(problems, lineProblem{line, hosting.M("validation.dns_line_duplicate", "first", firstRec[i][j])})
				continue
			}
			s.Records = append(s.Records, rec)
			firstRec[i] = append(firstRec[i], line)
		}
		err := zp.Err()
		if err == nil || full() {
			break
		}
		line, token := parseErrorAt(err)
		problems = append(problems, lineProblem{base + line, hosting.M("validation.dns_line_syntax", "token", clip(token))})
		if !r.skipLine(base + line) {
			break
		}
	}
	for _, p := range zoneProblems(sets) {
		if full() {
			break // the RRsets of a file not read to its end
		}
		line := 1
		if p.set >= 0 {
			line = firstRec[p.set][0]
		} else if len(sets) > MaxRRsets {
			line = firstRec[MaxRRsets][0]
		}
		problems = append(problems, lineProblem{line, p.msg})
	}
	if len(problems) == 0 {
		return sets, nil
	}
	slices.SortStableFunc(problems, func(a, b lineProblem) int { return a.line - b.line })
	var v hosting.Validation
	for _, p := range problems[:min(len(problems), MaxLineErrors)] {
		add(&v, "line "+strconv.Itoa(p.line), p.msg)
	}
	if full() {
		v.Add("zone_file", "validation.dns_zone_file_more", "max", MaxLineErrors)
	}
	return nil, v.Err()
}

type lineProblem struct {
	line int
	msg  hosting.Msg
}

// recordOf turns one parsed record into a one-record RRset and its record, or the
// message of the rule it breaks. The SOA and an apex NS come back as an RRset with
// no name: they are ignored.
func recordOf(zone string, ttl int, rr dns.RR, comment string) (RRset, Record, *hosting.Msg) {
	h := rr.Header()
	if h.Class != dns.ClassINET {
		return RRset{}, Record{}, msgp("validation.dns_line_class", "class", dns.Class(h.Class).String())
	}
	name, msg := ownerName(zone, h.Name)
	if msg != nil {
		return RRset{}, Record{}, msg
	}
	typ := dns.TypeToString[h.Rrtype]
	if name == Apex && (h.Rrtype == dns.TypeSOA || h.Rrtype == dns.TypeNS) {
		return RRset{}, Record{}, nil
	}
	t, msg := parseType(typ, name == Apex)
	if msg != nil {
		return RRset{}, Record{}, msg
	}
	if int64(h.Ttl) < MinTTL || int64(h.Ttl) > MaxTTL {
		return RRset{}, Record{}, msgp("validation.dns_ttl", "min", MinTTL, "max", MaxTTL)
	}
	value, msg := canonicalRR(rr)
	if msg != nil {
		return RRset{}, Record{}, msg
	}
	if len(value) > MaxValueBytes {
		return RRset{}, Record{}, msgp("validation.dns_value_length", "max", MaxValueBytes)
	}
	c := canonicalComment(strings.TrimPrefix(comment, ";"))
	if msg := checkComment(c); msg != nil {
		return RRset{}, Record{}, msg
	}
	set := RRset{Name: name, Type: t}
	if int(h.Ttl) != ttl {
		n := int(h.Ttl)
		set.TTL = &n
	}
	return set, Record{Value: value, Comment: c}, nil
}

func equalTTL(a, b *int) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func effTTL(t *int, def int) int {
	if t == nil {
		return def
	}
	return *t
}

var parseErrorRE = regexp.MustCompile(`: ("(?:[^"\\]|\\.)*") at line: (\d+):\d+$`)

// parseErrorAt returns the line and the token of a github.com/miekg/dns parse error
// (whose fields are its own: its text is "dns: REASON: "TOKEN" at line: L:C").
func parseErrorAt(err error) (int, string) {
	var pe *dns.ParseError
	if !errors.As(err, &pe) {
		return 1, ""
	}
	m := parseErrorRE.FindStringSubmatch(pe.Error())
	if m == nil {
		return 1, ""
	}
	line, _ := strconv.Atoi(m[2])
	token, _ := strconv.Unquote(m[1])
	return max(line, 1), token
}

// lineReader gives a zone file to the parser byte by byte (the parser then buffers
// nothing) and follows where each logical line starts: a record's parentheses may
// carry it over several lines, and comments and blank lines start none. This only
// numbers lines: the parsing is github.com/miekg/dns's.
type lineReader struct {
	s     string
	pos   int
	line  int // the line of the next byte, from 1
	start int // the line where the current logical line starts

	begun, quote, escape, comment bool
	depth                         int
}

func (r *lineReader) ReadByte() (byte, error) {
	if r.pos >= len(r.s) {
		return 0, io.EOF
	}
	c := r.s[r.pos]
	r.pos++
	line := r.line
	if c == '\n' {
		r.line++
	}
	switch {
	case r.comment:
		if c == '\n' {
			r.comment = false
			r.newline()
		}
		return c, nil
	case r.escape:
		r.escape = false
	case c == '\\':
		r.escape = true
	case r.quote:
		if c == '"' {
			r.quote = false
		}
	case c == '"':
		r.quote = true
	case c == ';':
		r.comment = true
		return c, nil
	case c == '(':
		r.depth++
	case c == ')':
		r.depth = max(r.depth-1, 0)
	case c == '\n':
		r.newline()
		return c, nil
	case c == ' ' || c == '\t' || c == '\r':
		return c, nil
	}
	if !r.begun {
		r.begun, r.start = true, line
	}
	return c, nil
}

// Read is there for io.Reader; the parser reads through ReadByte.
func (r *lineReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c, err := r.ReadByte()
		if err != nil {
			if n > 0 {
				return n, nil
			}
			return 0, err
		}
		p[n] = c
		n++
		if c == '\n' {
			break
		}
	}
	return n, nil
}

func (r *lineReader) newline() {
	if r.depth == 0 && !r.quote {
		r.begun = false
	}
}

// skipLine moves past the end of line n, where the parser stopped at an error, and
// forgets the state of the logical line. It reports whether any text is left.
func (r *lineReader) skipLine(n int) bool {
	for r.pos < len(r.s) && r.line <= n {
		if r.s[r.pos] == '\n' {
			r.line++
		}
		r.pos++
	}
	r.begun, r.quote, r.escape, r.comment, r.depth = false, false, false, false, 0
	return r.pos < len(r.s)
}

// SOA is what the operator puts at the apex of every zone: the serial, the
// nameservers (host names without a trailing dot, `serve --dns-nameservers`) and the
// zone's TTL, its $TTL.
type SOA struct {
	Serial      uint32
	Nameservers []string
	TTL         int
}

// The SOA's timers (RFC 1912 §2.2 values for a zone served by Berth alone): refresh,
// retry, expire, and the TTL of a negative answer.
const (
	SOARefresh  = 10800
	SOARetry    = 3600
	SOAExpire   = 1209600
	SOANegative = 300
)

// ExportZoneFile writes zone (a canonical zone name) as a zone file that
// ParseZoneFile reads back: $ORIGIN and $TTL, the SOA (its MNAME the first
// nameserver, its RNAME hostmaster.<zone>), the apex NS of each nameserver, then
// every RRset of sets (canonical), sorted by name in DNS order (the apex first,
// then by labels from the right) and by type, each record on its line with its TTL
// (the zone's when the set's is nil) and its comment. Exporting what ParseZoneFile
// read gives the same text again.
func ExportZoneFile(zone string, soa SOA, sets []RRset) string {
	var b strings.Builder
	fmt.Fprintf(&b, "$ORIGIN %s.\n$TTL %d\n", zone, soa.TTL)
	mname := zone + "."
	if len(soa.Nameservers) > 0 {
		mname = dns.Fqdn(strings.ToLower(soa.Nameservers[0]))
	}
	fmt.Fprintf(&b, "@\t%d\tIN\tSOA\t%s hostmaster.%s. %d %d %d %d %d\n",
		soa.TTL, mname, zone, soa.Serial, SOARefresh, SOARetry, SOAExpire, SOANegative)
	for _, ns := range soa.Nameservers {
		fmt.Fprintf(&b, "@\t%d\tIN\tNS\t%s\n", soa.TTL, dns.Fqdn(strings.ToLower(ns)))
	}
	sorted := slices.Clone(sets)
	slices.SortStableFunc(sorted, func(a, b RRset) int {
		if c := CompareNames(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(string(a.Type), string(b.Type))
	})
	for _, s := range sorted {
		ttl := effTTL(s.TTL, soa.TTL)
		for _, r := range s.Records {
			fmt.Fprintf(&b, "%s\t%d\tIN\t%s\t%s", s.Name, ttl, s.Type, r.Value)
			if r.Comment != "" {
				fmt.Fprintf(&b, " ; %s", r.Comment)
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// CompareNames orders canonical relative names as DNS does (RFC 4034 §6.1, on the
// text of the labels): the apex first, then label by label from the right, so that
// a name's children follow it ("a", "*.a", "b.a", "b").
func CompareNames(a, b string) int {
	if a == b {
		return 0
	}
	if a == Apex {
		return -1
	}
	if b == Apex {
		return 1
	}
	la, lb := strings.Split(a, "."), strings.Split(b, ".")
	for i, j := len(la)-1, len(lb)-1; i >= 0 && j >= 0; i, j = i-1, j-1 {
		if c := strings.Compare(la[i], lb[j]); c != 0 {
			return c
		}
	}
	return len(la) - len(lb)
}

// canonicalComment is a comment as it is kept: without the spaces around it, with
// each run of spaces inside as one space, and a space before each ';' inside it. (The
// zone-file parser keeps a comment's spaces only roughly, and puts a space before
// each ';' in it: this is the form it reads back as it is.)
func canonicalComment(c string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(c, ";", " ;")), " ")
}
