package httpapi_test

// The schema-driven property test (issue 14). From api/openapi.yaml it derives, for
// every operation, valid requests against a fixture (a running server with a snapshot,
// an SSH key, a project, a recipe, an operation) and boundary mutations of them, sends
// each through the real HTTP server of a whole Berth, and checks four properties of
// every answer:
//
//  1. its status is one the document lists for the operation, and never a 5xx;
//  2. its body validates against the document;
//  3. the headers the document gives that status are there;
//  4. a 422's `message` is its first field error (in the order of the request's
//     parameters and body fields) plus " (and N more errors)" when there are more,
//     in the account's language.
//
// A mutation the document, or the rules it states, refuses must moreover be refused
// on the mutated field: a value that fails the field's schema (null on a field that is
// not nullable, a wrong type, an unknown field, a string out of its lengths, a value
// out of its enum or bounds), an integer out of int64, an identifier that names
// nothing (0, -1, 2^63-1, ...; the document: "identifiers are positive integers"), a
// query parameter given twice: 422 with the field under `errors`. A path parameter
// that names nothing is 404. Everything else may answer anything the document lists.
//
// The random part (strings, large ids) comes from a fixed seed: every run sends the
// same requests in the same order, and a failure names the operation, the mutation,
// the request and the answer.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"math/big"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/internal/apitest"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/testenv"
)

// propSeed fixes the random values: the same cases on every run.
const propSeed = 14

// propMaxCases bounds the run (a few hundred requests take seconds, also under -race
// and on PostgreSQL). A document that grows past it fails the test rather than
// silently testing less: raise it knowingly.
const propMaxCases = 2000

// propLanguages are rotated over the operations, so that every message check runs in
// each of them.
var propLanguages = []string{"de", "fr", "en"}

// propAlternatives are body fields an operation takes one of, never both: a valid
// body has the first; a variant replaces it with the second.
var propAlternatives = map[string][2]string{"createServer": {"image_id", "app_id"}}

// propExpect is what an answer must be beyond the four properties.
type propExpect int

const (
	expectAny      propExpect = iota // anything the document lists
	expectReject                     // 422 with the field under errors
	expectNotFound                   // 404
)

type propCase struct {
	op       *propOp
	mutation string
	path     string      // relative to /v1, filled
	query    [][2]string // in order; a name may repeat
	header   [][2]string // in order; a name may repeat
	body     []byte      // nil: none
	expect   propExpect
	field    string // of expectReject
}

// propOp is an operation of the document.
type propOp struct {
	id, method, tmpl string // tmpl: "/servers/{id}"
	base             string // what tmpl is under: /v1, or a path's own servers' (/sandbox/v1)
	params           []*openapi3.Parameter
	body             *openapi3.Schema // nil: the operation takes no body
	fields           []string         // params then body properties, in document order
}

func TestPropertySchemaBoundaries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// The job queue is woken by each commit that enqueues: polling it every 10 ms
	// besides only burns the CPU the requests need (half the run, under -race).
	// The sandbox is on: its routes are in the document too (under /sandbox/v1).
	env := testenv.New(t, testenv.Options{RateLimit: 1 << 30, FetchPoll: 500 * time.Millisecond, Sandbox: true})
	acct := env.NewAccount("en", "100000", "")
	if _, err := env.App.Service.SetQuotas(ctx, acct.ID, map[string]int{"servers": 1000, "ssh-keys": 1000,
		"projects": 1000, "recipes": 1000, "snapshots": 1000}); err != nil {
		t.Fatal(err)
	}
	g := &propGen{t: t, rng: rand.New(rand.NewPCG(propSeed, propSeed)), fx: newFixture(t, acct), doc: propDoc(t)}
	// A fault for /faults/{id} that never applies (probability 0).
	g.faultID = itoa(num(t, data(t, acct.Sandbox("POST", "/faults", map[string]any{"status": 503, "probability": 0}).Want(t, http.StatusCreated))["id"]))
	apps := items(t, acct.Do("GET", "/apps", nil).Want(t, http.StatusOK))
	if len(apps) == 0 {
		t.Fatal("the catalog has no app")
	}
	g.appID = num(t, apps[0]["id"])

	ops := g.operations()
	var cases []propCase
	for _, op := range ops {
		cases = append(cases, g.cases(op)...)
	}
	if len(cases) > propMaxCases {
		t.Fatalf("%d cases, more than propMaxCases (%d): raise it if the run still takes seconds", len(cases), propMaxCases)
	}

	checker := apitest.New(t)
	client := &http.Client{Timeout: 90 * time.Second}
	start := time.Now()
	failed, lang := 0, ""
	for i, c := range cases {
		if i == 0 || c.op != cases[i-1].op {
			g.settle(acct)
			lang = propLanguages[slices.Index(ops, c.op)%len(propLanguages)]
			if _, err := env.App.Service.SetLanguage(ctx, hosting.Principal{Account: hosting.Account{ID: acct.ID}}, lang); err != nil {
				t.Fatal(err)
			}
		}
		if problems, answer := g.run(ctx, env, client, checker, acct, c); len(problems) > 0 {
			failed++
			t.Errorf("%s [%s]: %s\n  request: %s\n  answer: %s", c.op.id, c.mutation, strings.Join(problems, "; "), c.describe(), answer)
		}
	}
	t.Logf("%d cases over %d operations in %v; %d failed", len(cases), len(ops), time.Since(start).Round(time.Millisecond), failed)
}

// settle waits until the fixture's server has no operation in progress (the last
// operation's valid request may have started one), so that each operation's valid
// requests meet an idle server rather than a 409.
func (g *propGen) settle(acct *testenv.Account) {
	r := acct.Do("GET", "/servers/"+g.fx.serverID, nil)
	if r.Status != http.StatusOK {
		return // deleted by now
	}
	if op, ok := data(g.t, r)["operation"].(map[string]any); ok {
		acct.Do("GET", fmt.Sprintf("/operations/%d?wait=30", num(g.t, op["id"])), nil).Want(g.t, http.StatusOK)
	}
}

// propDoc loads the document with the positions of its keys, so that a schema's
// properties can be told in the order they are written.
func propDoc(t testing.TB) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	loader.IncludeOrigin = true
	doc, err := loader.LoadFromData(api.OpenAPIYAML)
	if err != nil {
		t.Fatalf("load api/openapi.yaml: %v", err)
	}
	return doc
}

// propGen derives the cases.
type propGen struct {
	t     testing.TB
	rng   *rand.Rand
	fx    *fixture
	doc   *openapi3.T
	appID int64
	seq   int
	// faultID is a sandbox fault of the account, for /faults/{id}.
	faultID string
}

// operations lists the document's operations: by path and method, those that delete
// after the others, and the deletion of the fixture's server last (it takes the
// snapshot with it).
func (g *propGen) operations() []*propOp {
	var out []*propOp
	for _, tmpl := range slices.Sorted(maps.Keys(g.doc.Paths.Map())) {
		item := g.doc.Paths.Value(tmpl)
		for _, method := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
			op := item.GetOperation(method)
			if op == nil || op.Extensions["x-berth-websocket"] == true {
				continue // a WebSocket's handshake and its refusals are TestConsole's
			}
			o := &propOp{id: op.OperationID, method: method, tmpl: tmpl, base: "/v1"}
			if len(item.Servers) == 1 {
				o.base = item.Servers[0].URL
			}
			byKey := map[string]*openapi3.Parameter{}
			var keys []string
			for _, refs := range []openapi3.Parameters{item.Parameters, op.Parameters} {
				for _, ref := range refs {
					p := ref.Value
					k := p.In + " " + p.Name
					if _, ok := byKey[k]; !ok {
						keys = append(keys, k)
					}
					byKey[k] = p
				}
			}
			for _, k := range keys {
				o.params = append(o.params, byKey[k])
				o.fields = append(o.fields, byKey[k].Name)
			}
			if rb := op.RequestBody; rb != nil && rb.Value != nil {
				if mt := rb.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
					o.body = mt.Schema.Value
					o.fields = append(o.fields, propertyOrder(o.body)...)
				}
			}
			out = append(out, o)
		}
	}
	rank := func(o *propOp) int {
		switch {
		case o.base == "/sandbox/v1" && o.tmpl == "/reset":
			return 3 // it empties the account: the fixture with it
		case o.method == "DELETE" && o.tmpl == "/servers/{id}":
			return 2
		case o.method == "DELETE":
			return 1
		}
		return 0
	}
	slices.SortStableFunc(out, func(a, b *propOp) int { return rank(a) - rank(b) })
	return out
}

// propertyOrder lists a schema's properties in the order the document writes them.
func propertyOrder(s *openapi3.Schema) []string {
	names := slices.Sorted(maps.Keys(s.Properties))
	line := func(n string) int {
		if v := s.Properties[n].Value; v != nil && v.Origin != nil && v.Origin.Key != nil {
			return v.Origin.Key.Line
		}
		return math.MaxInt
	}
	slices.SortStableFunc(names, func(a, b string) int { return line(a) - line(b) })
	return names
}

// flat is a schema as far as a value's type goes: a lone allOf member stands for the
// schema it wraps (nullable stays the outer one's).
func flat(s *openapi3.Schema) *openapi3.Schema {
	for s != nil && (s.Type == nil || len(s.Type.Slice()) == 0) && len(s.AllOf) == 1 && s.AllOf[0].Value != nil {
		s = s.AllOf[0].Value
	}
	return s
}

func typeOf(s *openapi3.Schema) string {
	if s = flat(s); s == nil || s.Type == nil || len(s.Type.Slice()) == 0 {
		return ""
	}
	return s.Type.Slice()[0]
}

// isID reports whether a field holds identifiers of resources (the document:
// "identifiers are positive integers").
func isID(name string) bool {
	return name == "id" || strings.HasSuffix(name, "_id") || strings.HasSuffix(name, "_ids")
}

func (g *propGen) next() int { g.seq++; return g.seq }

// validString is a string the schema takes (letters and digits, so that it fits
// name patterns), unique in the run.
func (g *propGen) validString(s *openapi3.Schema) string {
	v := fmt.Sprintf("prop%d", g.next())
	for uint64(utf8.RuneCountInString(v)) < s.MinLength {
		v += "x"
	}
	if s.MaxLength != nil && uint64(len(v)) > *s.MaxLength {
		v = v[:*s.MaxLength]
	}
	return v
}

// validValue is a value of a body field that names the fixture's resources.
func (g *propGen) validValue(op *propOp, name string, s *openapi3.Schema) any {
	fx := g.fx
	id := func(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }
	switch name {
	case "plan_id":
		if op.id == "rescaleServer" {
			return 2 // another plan of the location
		}
		return 1
	case "location_id":
		return 1
	case "image_id":
		if op.id == "reinstallServer" {
			return 2
		}
		return 1
	case "app_id":
		return g.appID
	case "recipe_id":
		return id(fx.recID)
	case "project_id":
		return id(fx.projectID)
	case "server_id":
		return id(fx.serverID)
	case "ssh_key_ids":
		return []int64{id(fx.keyID)}
	case "public_key":
		return testenv.PublicKey(g.t)
	case "script":
		return "#!/bin/sh\ntrue\n"
	case "action":
		return "reboot" // fits the running server
	case "credit":
		return "100.00" // a sandbox reset's
	}
	f := flat(s)
	if len(f.Enum) > 0 {
		return f.Enum[0]
	}
	switch typeOf(s) {
	case "string":
		return g.validString(f)
	case "integer":
		if f.Min != nil && *f.Min > 1 {
			return int64(*f.Min)
		}
		return 1
	case "boolean":
		return false
	case "array":
		return []any{}
	case "object":
		return map[string]any{}
	}
	return nil
}

// validParam is a value of a query or header parameter.
func (g *propGen) validParam(p *openapi3.Parameter) string {
	switch p.Name {
	case "project_id":
		return g.fx.projectID
	case "server_id":
		return g.fx.serverID
	case "page":
		return "1"
	case "Idempotency-Key":
		return fmt.Sprintf("prop-%d", g.next())
	}
	s := flat(p.Schema.Value)
	if len(s.Enum) > 0 {
		return fmt.Sprint(s.Enum[0])
	}
	if typeOf(s) == "integer" {
		if s.Min != nil && *s.Min > 1 {
			return strconv.FormatInt(int64(*s.Min), 10)
		}
		return "1"
	}
	return g.validString(s)
}

// pathValue fills a path parameter with the fixture's resource.
func (g *propGen) pathValue(op *propOp, name string) string {
	segs := strings.Split(strings.TrimPrefix(op.tmpl, "/"), "/")
	for i, s := range segs {
		if s == "{"+name+"}" && i > 0 {
			params := g.fx.params(false)
			params["faults/{id}"] = g.faultID
			if v, ok := params[segs[i-1]+"/"+s]; ok {
				return v
			}
		}
	}
	g.t.Fatalf("%s %s: no fixture for path parameter %s; extend fixture.params", op.method, op.tmpl, name)
	return ""
}

// base is a valid request of op: every parameter and body field with a valid value;
// alt picks the body's alternative field.
func (g *propGen) base(op *propOp, alt bool) propCase {
	c := propCase{op: op, path: op.tmpl}
	for _, p := range op.params {
		switch p.In {
		case "path":
			c.path = strings.ReplaceAll(c.path, "{"+p.Name+"}", g.pathValue(op, p.Name))
		case "query":
			c.query = append(c.query, [2]string{p.Name, g.validParam(p)})
		case "header":
			c.header = append(c.header, [2]string{p.Name, g.validParam(p)})
		}
	}
	if op.body != nil {
		c.body = g.encode(g.baseBody(op, alt, false, ""))
	}
	return c
}

// bare is base without its optional headers: the mutations of the path, the query
// and the body go without an Idempotency-Key (its record costs a write), the valid
// requests and the header's own mutations with one.
func (g *propGen) bare(op *propOp, alt bool) propCase {
	c := g.base(op, alt)
	c.header = slices.DeleteFunc(c.header, func(h [2]string) bool {
		i := slices.IndexFunc(op.params, func(p *openapi3.Parameter) bool { return p.In == "header" && p.Name == h[0] })
		return !op.params[i].Required
	})
	return c
}

// baseBody is a valid body of op: every field, or (only) the required ones, the
// alternative in use and keep. alt picks the alternative.
func (g *propGen) baseBody(op *propOp, alt, only bool, keep string) map[string]any {
	use, skip := "", ""
	if pair, ok := propAlternatives[op.id]; ok {
		use, skip = pair[0], pair[1]
		if alt {
			use, skip = pair[1], pair[0]
		}
	}
	body := map[string]any{}
	for _, name := range propertyOrder(op.body) {
		if name == skip || only && name != use && name != keep && !slices.Contains(op.body.Required, name) {
			continue
		}
		body[name] = g.validValue(op, name, op.body.Properties[name].Value)
	}
	return body
}

func (g *propGen) encode(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		g.t.Fatal(err)
	}
	return b
}

// Boundary values.
var (
	propIntegers   = []string{"0", "-1", "9223372036854775807", "9223372036854775808", "99999999999999999999"}
	propPathValues = []string{"0", "-1", "9223372036854775807", "9223372036854775808", "99999999999999999999",
		"abc", "1.5", "00", "server-000000"}
	// propChangePathValues are those sent to routes that change state, which cost
	// more (each answer is written to the audit log).
	propChangePathValues = []string{"0", "9223372036854775808", "abc"}
	propQueryIntegers    = []string{"0", "-1", "9223372036854775807", "9223372036854775808", "99999999999999999999",
		"", "abc", "1.5", "1e3", " 1", "+1", "01"}
)

// randomString draws a string of 1 to 80 characters from a pool that mixes ASCII with
// accents, other scripts, emoji, combining marks, invisible and control characters.
func (g *propGen) randomString() string {
	pool := []rune("abcXYZ019 -_.,;:'\"\\/<>{}[]()!?@#$%&*+=~`^|éßØñ中文日本語한국어Привет😀🚀\u0301\u200b\u00a0\t\n\u0007\u007f")
	n := 1 + g.rng.IntN(80)
	var b strings.Builder
	for range n {
		b.WriteRune(pool[g.rng.IntN(len(pool))])
	}
	return b.String()
}

// randomID is a positive int64 far beyond any id the fixture made.
func (g *propGen) randomID() string {
	return strconv.FormatInt(1<<40+g.rng.Int64N(math.MaxInt64-1<<40), 10)
}

// cases derives the cases of one operation: its mutations, then its valid requests
// (so that a valid deletion comes after the mutations that need the resource).
func (g *propGen) cases(op *propOp) []propCase {
	var out []propCase
	add := func(c propCase, mutation string, expect propExpect, field string) {
		c.mutation, c.expect, c.field = mutation, expect, field
		out = append(out, c)
	}
	for _, p := range op.params {
		switch p.In {
		case "path":
			if op.id == "putRRset" && p.Name != "id" {
				// A PUT creates the RRset its path names: any name is one to create
				// (or a 422 on name or type), never a resource not found.
				continue
			}
			values := propPathValues
			if op.method != "GET" {
				values = propChangePathValues
			}
			for _, v := range values {
				c := g.bare(op, false)
				c.path = strings.Replace(op.tmpl, "{"+p.Name+"}", url.PathEscape(v), 1)
				for _, q := range op.params {
					if q.In == "path" && q != p {
						c.path = strings.ReplaceAll(c.path, "{"+q.Name+"}", g.pathValue(op, q.Name))
					}
				}
				add(c, fmt.Sprintf("path %s=%q", p.Name, v), expectNotFound, "")
			}
		case "query":
			values := propQueryIntegers
			if typeOf(p.Schema.Value) != "integer" {
				values = []string{"", "bogus", strings.Repeat("x", 300), g.randomString()}
			}
			if isID(p.Name) {
				values = append(slices.Clone(values), g.randomID())
			}
			for _, v := range values {
				c := g.bare(op, false)
				setPair(c.query, p.Name, v)
				e, f := g.queryExpect(p, v)
				add(c, fmt.Sprintf("query %s=%q", p.Name, v), e, f)
			}
			c := g.bare(op, false)
			valid := pairValue(c.query, p.Name)
			c.query = append(c.query, [2]string{p.Name, valid})
			add(c, fmt.Sprintf("query %s given twice (%q, %q)", p.Name, valid, valid), expectReject, p.Name)
			c = g.bare(op, false)
			c.query = append(c.query, [2]string{p.Name, "0"})
			add(c, fmt.Sprintf("query %s given twice (%q, \"0\")", p.Name, valid), expectReject, p.Name)
		case "header":
			s := flat(p.Schema.Value)
			values := []string{""}
			if s.MaxLength != nil {
				for _, n := range []int{int(*s.MaxLength), int(*s.MaxLength) + 1} {
					v := fmt.Sprintf("prop-%d-", g.next()) // unique: a key used twice would replay
					values = append(values, v+strings.Repeat("k", n-len(v)))
				}
			}
			for _, v := range values {
				c := g.base(op, false)
				setPair(c.header, p.Name, v)
				e := expectAny
				if s.VisitJSON(v) != nil {
					e = expectReject
				}
				add(c, fmt.Sprintf("header %s of %d characters", p.Name, len(v)), e, headerField(p.Name))
			}
			c := g.base(op, false)
			c.header = append(c.header, [2]string{p.Name, g.validParam(p)})
			add(c, fmt.Sprintf("header %s given twice", p.Name), expectReject, headerField(p.Name))
		}
	}
	if op.body != nil {
		out = append(out, g.bodyCases(op)...)
	}
	add(g.base(op, false), "valid", expectAny, "")
	if _, ok := propAlternatives[op.id]; ok {
		add(g.base(op, true), "valid, alternative "+propAlternatives[op.id][1], expectAny, "")
	}
	c := g.base(op, false)
	c.query, c.header = nil, nil
	if op.body != nil {
		c.body = g.encode(g.baseBody(op, false, true, ""))
	}
	add(c, "valid, required parts only", expectAny, "")
	return out
}

// bodyCases are the mutations of the body: of the whole, and of each field.
func (g *propGen) bodyCases(op *propOp) []propCase {
	var out []propCase
	for _, raw := range []string{"null", "[]", `"x"`, "{", `{}{}`} {
		c := g.bare(op, false)
		c.body = []byte(raw)
		c.mutation, c.expect, c.field = "body "+raw, expectReject, "body"
		out = append(out, c)
	}
	names := propertyOrder(op.body)
	// one mutation: body is a valid body with field set to raw JSON (absent: removed).
	mutate := func(field, mutation, raw string, absent bool, idRule bool) {
		alt := false
		if pair, ok := propAlternatives[op.id]; ok && pair[1] == field {
			alt = true
		}
		// The other optional fields are left out: each costs (a root password is
		// hashed before anything is checked), and the valid cases send them all.
		body := g.baseBody(op, alt, true, field)
		if absent {
			delete(body, field)
		} else {
			body[field] = json.RawMessage(raw)
		}
		c := g.bare(op, alt)
		c.body = g.encode(body)
		c.mutation, c.field = "body "+mutation, field
		if idRule || g.bodyRejected(op, c.body) {
			c.expect = expectReject
		}
		out = append(out, c)
	}
	for _, name := range names {
		s := op.body.Properties[name].Value
		mutate(name, name+"=null", "null", false, false)
		mutate(name, name+" absent", "", true, false)
		switch typeOf(s) {
		case "integer":
			for _, v := range append(slices.Clone(propIntegers), g.randomID()) {
				mutate(name, name+"="+v, v, false, integerRule(name, v, true))
			}
			for _, v := range []string{`"1"`, "1.5", "{}"} {
				mutate(name, name+"="+v, v, false, false)
			}
		case "string":
			long := 4096
			if m := flat(s).MaxLength; m != nil {
				long = int(*m) + 1
			}
			for _, v := range []string{"", strings.Repeat("a", long), g.randomString()} {
				raw := string(g.encode(v))
				label := raw
				if len(v) > 40 {
					label = fmt.Sprintf("(%d characters)", utf8.RuneCountInString(v))
				}
				mutate(name, name+"="+label, raw, false, false)
			}
			for _, v := range []string{"1", "[]"} {
				mutate(name, name+"="+v, v, false, false)
			}
		case "boolean":
			for _, v := range []string{`"true"`, "1", "{}"} {
				mutate(name, name+"="+v, v, false, false)
			}
		case "array":
			items := flat(s).Items
			if items != nil && typeOf(items.Value) == "integer" {
				for _, v := range append(slices.Clone(propIntegers), g.randomID()) {
					mutate(name, name+"=["+v+"]", "["+v+"]", false, integerRule(name, v, true))
				}
			}
			for _, v := range []string{"[null]", `["1"]`, `"1"`, "{}"} {
				mutate(name, name+"="+v, v, false, false)
			}
		}
	}
	for _, field := range []string{"unknown_field", strings.ToUpper(firstOr(names, "name"))} {
		mutate(field, field+"=1 (unknown)", "1", false, false)
	}
	return out
}

func firstOr(s []string, or string) string {
	if len(s) > 0 {
		return s[0]
	}
	return or
}

// integerRule reports whether an integer value must be refused whatever the schema
// says: out of int64, or an identifier that names nothing (in a body, every id must
// name a resource; a query filter needs only be a positive integer).
func integerRule(field, v string, inBody bool) bool {
	n, ok := new(big.Int).SetString(v, 10)
	if !ok {
		return true
	}
	if !n.IsInt64() {
		return true
	}
	if isID(field) {
		return inBody || n.Int64() < 1
	}
	return false
}

// bodyRejected reports whether the document's schema refuses a body.
func (g *propGen) bodyRejected(op *propOp, body []byte) bool {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return true
	}
	return op.body.VisitJSON(v, openapi3.VisitAsRequest(), openapi3.MultiErrors()) != nil
}

// queryExpect is what a query parameter's value must answer.
func (g *propGen) queryExpect(p *openapi3.Parameter, v string) (propExpect, string) {
	s := flat(p.Schema.Value)
	if typeOf(s) == "integer" {
		if integerRule(p.Name, v, false) {
			return expectReject, p.Name
		}
		n, _ := strconv.ParseInt(strings.TrimPrefix(v, "+"), 10, 64)
		if s.VisitJSON(float64(n)) != nil {
			return expectReject, p.Name
		}
		return expectAny, p.Name
	}
	if s.VisitJSON(v) != nil {
		return expectReject, p.Name
	}
	return expectAny, p.Name
}

func setPair(pairs [][2]string, name, v string) {
	for i := range pairs {
		if pairs[i][0] == name {
			pairs[i][1] = v
			return
		}
	}
}

func pairValue(pairs [][2]string, name string) string {
	for _, p := range pairs {
		if p[0] == name {
			return p[1]
		}
	}
	return ""
}

func (c propCase) rawQuery() string {
	var parts []string
	for _, p := range c.query {
		parts = append(parts, url.QueryEscape(p[0])+"="+url.QueryEscape(p[1]))
	}
	return strings.Join(parts, "&")
}

// describe is the request as a line: method, path and query, headers, body.
func (c propCase) describe() string {
	s := c.op.method + " " + c.op.base + c.path
	if q := c.rawQuery(); q != "" {
		s += "?" + q
	}
	for _, h := range c.header {
		v := h[1]
		if len(v) > 40 {
			v = fmt.Sprintf("(%d characters)", len(v))
		}
		s += fmt.Sprintf(" [%s: %q]", h[0], v)
	}
	if c.body != nil {
		s += " " + excerpt(c.body)
	}
	return s
}

func excerpt(b []byte) string {
	const max = 300
	if len(b) > max {
		return fmt.Sprintf("%s… (%d bytes)", b[:max], len(b))
	}
	return string(b)
}

// collector is a testing.TB that keeps what the Checker reports.
type collector struct {
	testing.TB
	msgs []string
}

func (c *collector) Helper() {}

func (c *collector) Errorf(format string, args ...any) {
	c.msgs = append(c.msgs, fmt.Sprintf(format, args...))
}

// run sends one case and returns the properties it breaks and a line describing the
// answer.
func (g *propGen) run(ctx context.Context, env *testenv.Env, client *http.Client, checker *apitest.Checker,
	acct *testenv.Account, c propCase) ([]string, string) {
	t := g.t
	u := env.Root + c.op.base + c.path
	if q := c.rawQuery(); q != "" {
		u += "?" + q
	}
	var rd io.Reader
	if c.body != nil {
		rd = bytes.NewReader(c.body)
	}
	req, err := http.NewRequestWithContext(ctx, c.op.method, u, rd)
	if err != nil {
		t.Fatalf("%s [%s]: %v", c.op.id, c.mutation, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+acct.Token)
	if c.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range c.header {
		req.Header.Add(h[0], h[1])
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s [%s]: %v", c.op.id, c.mutation, err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("%s [%s]: %v", c.op.id, c.mutation, err)
	}
	answer := fmt.Sprintf("%d %s", resp.StatusCode, excerpt(body))

	// 1-3: a documented status, a body and headers as documented.
	col := &collector{TB: t}
	checker.Check(col, req, resp.StatusCode, resp.Header, body)
	problems := col.msgs
	if resp.StatusCode >= 500 {
		problems = append(problems, fmt.Sprintf("answered %d, a server error", resp.StatusCode))
	}
	var e apiError
	if resp.StatusCode == http.StatusUnprocessableEntity {
		if err := json.Unmarshal(body, &e); err != nil {
			problems = append(problems, "a 422 whose body is not an error: "+err.Error())
		} else if p := g.checkMessage(ctx, env, acct, c.op, e); p != "" {
			problems = append(problems, p)
		}
	}
	switch c.expect {
	case expectReject:
		// An item of a list may be refused at its place (the sandbox's seed:
		// "servers[0].plan_id").
		onItem := slices.ContainsFunc(slices.Collect(maps.Keys(e.Errors)), func(k string) bool { return strings.HasPrefix(k, c.field+"[") })
		if resp.StatusCode != http.StatusUnprocessableEntity || len(e.Errors[c.field]) == 0 && !onItem {
			problems = append(problems, fmt.Sprintf("want 422 with errors.%s", c.field))
		}
	case expectNotFound:
		if resp.StatusCode != http.StatusNotFound {
			problems = append(problems, "want 404")
		}
	}
	return problems, answer
}

// checkMessage checks property 4: message is the first field's first message plus
// " (and N more errors)" when there are N more, in the account's language.
func (g *propGen) checkMessage(ctx context.Context, env *testenv.Env, acct *testenv.Account, op *propOp, e apiError) string {
	if len(e.Errors) == 0 {
		return "a 422 without errors"
	}
	a, err := env.App.DB.Account(ctx, acct.ID)
	if err != nil {
		g.t.Fatal(err)
	}
	total := 0
	for k, msgs := range e.Errors {
		if len(msgs) == 0 {
			return fmt.Sprintf("errors.%s is an empty list", k)
		}
		total += len(msgs)
	}
	suffix := ""
	if total > 1 {
		suffix = msg(a.Language, "error.more_errors", "count", total-1)
	}
	var first []string // the keys that may lead: the first documented one, else any
	for _, f := range op.fields {
		if _, ok := e.Errors[f]; ok {
			first = []string{f}
			break
		}
	}
	if first == nil {
		for k := range e.Errors {
			first = append(first, k)
		}
		slices.Sort(first)
	}
	for _, k := range first {
		if e.Message == e.Errors[k][0]+suffix {
			return ""
		}
	}
	return fmt.Sprintf("message %q is not the first error of %v plus %q (%d errors, language %s)", e.Message, first, suffix, total, a.Language)
}

// headerField is the errors key of a header's 422: Idempotency-Key's is
// idempotency_key (docs/api.md, Shapes and small rules).
func headerField(name string) string {
	if name == "Idempotency-Key" {
		return ops.IdempotencyKeyField
	}
	return name
}
