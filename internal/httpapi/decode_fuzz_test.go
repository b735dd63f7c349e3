package httpapi

// FuzzDecodeBodies: request body decoding (docs/api.md, Wire format and Errors), for every route that
// reads a body, against the OpenAPI document's schema of that body.
//
//	go test -run='^$' -fuzz='^FuzzDecodeBodies$' -fuzztime=1m ./internal/httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/internal/apitest"
	"github.com/berthhq/berth/internal/dnszone"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/i18n"
)

// bodyRoutes are the routes that read a body: what their handler decodes into, and
// with which cap. FuzzDecodeBodies fails when a POST or PATCH route is missing here.
var bodyRoutes = []struct {
	route string // as in routes(), without /v1
	dst   func() any
	max   int64
}{
	{"PATCH /me", func() any { return new(api.MeUpdate) }, MaxBody},
	{"POST /servers", func() any { return new(api.ServerCreate) }, MaxBody},
	{"PATCH /servers/{id}", func() any { return new(api.ServerUpdate) }, MaxBody},
	{"POST /servers/{id}/power", func() any { return new(api.PowerRequest) }, MaxBody},
	{"POST /servers/{id}/console", func() any { return new(struct{}) }, MaxBody},
	{"POST /servers/{id}/reinstall", func() any { return new(api.ReinstallRequest) }, MaxBody},
	{"POST /servers/{id}/rescale", func() any { return new(api.RescaleRequest) }, MaxBody},
	{"POST /servers/{id}/snapshots", func() any { return new(api.SnapshotCreate) }, MaxBody},
	{"POST /servers/{id}/licenses", func() any { return new(api.ServerLicenseCreate) }, MaxBody},
	{"POST /servers/{id}/snapshots/{snapshot}/restore", func() any { return new(struct{}) }, MaxBody},
	{"POST /ssh-keys", func() any { return new(api.SSHKeyCreate) }, MaxBody},
	{"POST /projects", func() any { return new(api.ProjectWrite) }, MaxBody},
	{"PATCH /projects/{id}", func() any { return new(api.ProjectWrite) }, MaxBody},
	{"POST /recipes", func() any { return new(api.RecipeWrite) }, MaxRecipeBody},
	{"PATCH /recipes/{id}", func() any { return new(api.RecipeWrite) }, MaxRecipeBody},
	{"POST /volumes", func() any { return new(api.VolumeCreate) }, MaxBody},
	{"PATCH /volumes/{id}", func() any { return new(api.VolumeUpdate) }, MaxBody},
	{"POST /volumes/{id}/attach", func() any { return new(api.VolumeAttach) }, MaxBody},
	{"POST /volumes/{id}/detach", func() any { return new(struct{}) }, MaxBody},
	{"POST /volumes/{id}/resize", func() any { return new(api.VolumeResize) }, MaxBody},
	{"POST /domains", func() any { return new(api.DomainCreate) }, 2 * dnszone.MaxZoneFileBytes},
	{"PATCH /domains/{id}", func() any { return new(api.DomainUpdate) }, MaxBody},
	{"PUT /domains/{id}/rrsets/{name}/{type}", func() any { return new(api.RRsetPut) }, MaxBody},
	{"PUT /servers/{id}/rdns", func() any { return new(api.RDNSSet) }, MaxBody},
	{"POST /webhooks", func() any { return new(api.WebhookWrite) }, MaxBody},
	{"PATCH /webhooks/{id}", func() any { return new(api.WebhookWrite) }, MaxBody},
	{"POST /webhooks/{id}/test", func() any { return new(struct{}) }, MaxBody},
	{"POST /webhooks/{id}/rotate-secret", func() any { return new(struct{}) }, MaxBody},
	{"POST /webhooks/{id}/deliveries/{delivery}/redeliver", func() any { return new(struct{}) }, MaxBody},
	{"POST /tickets", func() any { return new(api.TicketCreate) }, MaxTicketBody},
	{"POST /tickets/{id}/messages", func() any { return new(api.TicketMessageCreate) }, MaxTicketBody},
	{"POST /tickets/{id}/close", func() any { return new(struct{}) }, MaxBody},
}

// rawBodyRoutes read a body that is not JSON: an attachment's is the file itself
// (its checks are TestAttachments' and hosting's TestCheckAttachment).
var rawBodyRoutes = map[string]bool{"POST /attachments": true}

var decodeCatalog = sync.OnceValue(i18n.MustLoad)

// catalogued is the set of message ids of the catalog.
var catalogued = sync.OnceValue(func() map[string]bool {
	ids := map[string]bool{}
	for _, id := range decodeCatalog().IDs() {
		ids[id] = true
	}
	return ids
})

// FuzzDecodeBodies: decode never panics and never fails with anything but a 422
// validation error; each error names "body", a field of the route's schema, or a
// field the body sent that the schema does not have, with catalogued messages that
// render in every language. What decode accepts is JSON (or nothing), one object,
// no larger than the cap, whose fields are all exactly fields of the schema, with
// values of the schema's types (null only where the schema says nullable).
func FuzzDecodeBodies(f *testing.F) {
	seeds := []string{
		``, ` `, `{}`, ` {} `, "\n{}\n", `null`, `[]`, `"x"`, `1`, `true`, `{`, `}`, `{}}`, `{} {}`, `{}x`, `{"a":1}{`,
		`{"plan_id":1,"location_id":1,"image_id":1}`,
		`{"plan_id":1,"location_id":1,"image_id":1,"ssh_key_ids":[1,2],"display_name":"web","project_id":null,"recipe_id":1,"root_password":"hunter22hunter22"}`,
		`{"plan_id":1,"location_id":1,"app_id":1,"project_id":3}`,
		`{"plan_id":"1"}`, `{"plan_id":1.5}`, `{"plan_id":1e3}`, `{"plan_id":-1}`, `{"plan_id":9223372036854775807}`,
		`{"plan_id":9223372036854775808}`, `{"plan_id":1e400}`, `{"plan_id":true}`, `{"plan_id":[1]}`, `{"plan_id":{}}`,
		`{"plan_id":null}`, `{"plan_id":1,"plan_id":2}`, `{"plan_id":1,"plan_id":"x"}`,
		`{"ssh_key_ids":[1,"2"]}`, `{"ssh_key_ids":{}}`, `{"ssh_key_ids":[[1]]}`, `{"ssh_key_ids":null}`, `{"ssh_key_ids":[]}`,
		`{"project_id":null}`, `{"project_id":"x"}`, `{"project_id":{"a":1}}`,
		`{"display_name":"web"}`, `{"display_name":1}`, `{"display_name":null}`, `{"display_name":"\u0000"}`,
		`{"display_name":"\ud800"}`, "{\"display_name\":\"\xff\"}", `{"status":"running"}`, `{"ssh_keys":[1]}`,
		`{"action":"on"}`, `{"action":"reboot","force":true}`, `{"action":1}`,
		`{"image_id":1}`, `{"plan_id":2,"upgrade_disk":true}`, `{"upgrade_disk":"yes"}`,
		`{"name":"before-upgrade","include_memory":true}`, `{"include_memory":1}`,
		`{"name":"laptop","public_key":"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAID3YGPkvxwpLYTWLsdn1mLoJiEPHQZpKYiaXghboYDVf me"}`,
		`{"name":"p"}`, `{"name":"deploy","script":"#!/bin/sh\necho hi\n"}`, `{"script":null}`,
		`{"a":{"b":{"c":[1,2,{"d":null}]}}}`, `{"":1}`, `{"\u0000":1}`, `{"plan_id"  :  1  }`,
		"\xef\xbb\xbf{}", "{\"name\":\"p\"}\x00", `{"name":"p",}`, `{'name':'p'}`, `{"name":"p"`,
		`{"a":` + strings.Repeat(`[`, 100) + strings.Repeat(`]`, 100) + `}`, "\v", "\f{}", "\u00a0{}", "{}\u0085",
		`{"name":"\udc00"}`, `{"name":"\ud800\u0041"}`, `{"name":"\ud800x"}`, `{"name":"\ud83d\ude00"}`,
		`{"name":"\\ud800"}`, `{"name":"\ufffd"}`, `{"\ud800":1}`, "{\"name\":\"\xed\xa0\x80\"}", "{\"name\":\"\xc0\xaf\"}",
		`{"Plan_ID":1}`, `{"NAME":"p"}`, `{"\u017fcript":"x"}`, `{"name":"p","name":"q"}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	check := decodeChecker(f)
	f.Fuzz(check)
}

// TestDecodeBodiesLarge runs FuzzDecodeBodies' checks on bodies too large to be good
// fuzzing seeds (the mutator would spend its time copying them): past the caps, at
// them, and deep or wide JSON.
func TestDecodeBodiesLarge(t *testing.T) {
	t.Parallel()
	check := decodeChecker(t)
	pad := func(n int) string { return `{"name":"` + strings.Repeat("x", n-len(`{"name":""}`)) + `"}` }
	for _, body := range []string{
		pad(MaxBody), pad(MaxBody + 1), " " + pad(MaxBody), pad(MaxRecipeBody), pad(MaxRecipeBody + 1),
		`{"name":"p","script":"` + strings.Repeat(`\u0041`, hosting.RecipeScriptMax) + `"}`,
		`{"name":"p","script":"` + strings.Repeat(`\u0041`, hosting.RecipeScriptMax+1) + `"}`,
		"{\"a\":" + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + "}",
		`{"plan_id":` + strings.Repeat(`[`, 5000) + strings.Repeat(`]`, 5000) + `}`,
		"{" + strings.Repeat(`"k":1,`, 12000) + `"k":1}`,
		"{" + strings.Repeat(`"name":"p",`, 5000) + `"name":"p"}`,
		`{"ssh_key_ids":[` + strings.Repeat(`1,`, 30000) + `1]}`,
		strings.Repeat(" ", MaxBody) + "{}",
	} {
		t.Run(fmt.Sprintf("%d bytes %.20s", len(body), body), func(t *testing.T) { check(t, []byte(body)) })
	}
}

// decodeChecker returns FuzzDecodeBodies' property check.
func decodeChecker(tb testing.TB) func(t *testing.T, body []byte) {
	tb.Helper()

	doc := apitest.New(tb).Doc()
	s := &Server{i18n: decodeCatalog()}
	covered := map[string]bool{}
	schemas := make([]*openapi3.Schema, len(bodyRoutes))
	for i, br := range bodyRoutes {
		covered[br.route] = true
		method, path, _ := strings.Cut(br.route, " ")
		op := doc.Paths.Value(path).GetOperation(method)
		if op == nil || op.RequestBody == nil {
			tb.Fatalf("%s: no request body in the OpenAPI document", br.route)
		}
		schemas[i] = op.RequestBody.Value.Content.Get("application/json").Schema.Value
	}
	for _, rt := range s.routes() {
		if (rt.method == "POST" || rt.method == "PATCH") && !covered[rt.method+" "+rt.path] && !rawBodyRoutes[rt.method+" "+rt.path] {
			tb.Fatalf("%s %s reads a body; add it to bodyRoutes", rt.method, rt.path)
		}
	}

	return func(t *testing.T, body []byte) {
		keys, isObject := topLevelKeys(body)
		for i, br := range bodyRoutes {
			dst := br.dst()
			r := &http.Request{Method: "POST", Body: io.NopCloser(bytes.NewReader(body))}
			err := decodeMax(r, dst, br.max)
			fields := jsonFields(dst)
			if err != nil {
				checkDecodeError(t, s, br.route, body, err, fields, keys)
				continue
			}
			if int64(len(body)) > br.max {
				t.Fatalf("%s: accepted a body of %d bytes, over the cap of %d", br.route, len(body), br.max)
			}
			if len(bytes.Trim(body, " \t\r\n")) == 0 {
				continue // no body is {}
			}
			if !isObject {
				t.Fatalf("%s: accepted %q, which is not one JSON object", br.route, body)
			}
			if !utf8.Valid(body) || replacedChars(body) {
				t.Fatalf("%s: accepted %q, which is not UTF-8 text (a lone surrogate or a bad byte became U+FFFD)", br.route, body)
			}
			for _, k := range keys {
				if !fields[k] {
					t.Fatalf("%s: accepted %q with field %q, which the schema does not have", br.route, body, k)
				}
			}
			if msg := schemaShape(schemas[i], body); msg != "" {
				t.Fatalf("%s: accepted %q, which does not fit the schema: %s", br.route, body, msg)
			}
		}
	}
}

// replacedChars reports whether decoding the JSON text made a U+FFFD that the text
// did not spell (as a character or as \ufffd): what encoding/json does with a lone
// surrogate escape.
func replacedChars(body []byte) bool {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return false
	}
	decoded, _ := json.Marshal(v)
	spelled := bytes.Count(body, []byte("\uFFFD")) + bytes.Count(bytes.ToLower(body), []byte(`\ufffd`))
	return bytes.Count(decoded, []byte("\uFFFD")) > spelled
}

// checkDecodeError fails unless err is a validation error that names only known
// places and renders fully.
func checkDecodeError(t *testing.T, s *Server, route string, body []byte, err error, fields map[string]bool, keys []string) {
	t.Helper()
	var he *hosting.Error
	if !errors.As(err, &he) || he.Code != hosting.CodeValidationFailed {
		t.Fatalf("%s: %q: error %v (%T), want a validation error", route, body, err, err)
	}
	if len(he.Fields) == 0 || len(he.Order) != len(he.Fields) {
		t.Fatalf("%s: %q: validation error without fields: %+v", route, body, he)
	}
	sent := map[string]bool{}
	for _, k := range keys {
		sent[k] = true
	}
	known := catalogued()
	for _, field := range he.Order {
		msgs := he.Fields[field]
		if len(msgs) == 0 {
			t.Fatalf("%s: %q: field %q in the order without messages", route, body, field)
		}
		for _, m := range msgs {
			switch {
			case m.ID == "validation.unknown_field":
				if field == "body" && sent[""] {
					break // the member named "" is reported on the body
				}
				if fields[field] || !sent[field] {
					t.Errorf("%s: %q: %q reported unknown; sent %v, schema field %v", route, body, field, sent[field], fields[field])
				}
			case field != "body" && !fields[field]:
				t.Errorf("%s: %q: error %s on %q, which is neither body nor a field of the schema", route, body, m.ID, field)
			}
			if !known[m.ID] {
				t.Errorf("%s: %q: message id %q is not in the catalog", route, body, m.ID)
			}
		}
	}
	if int64(len(body)) > maxOf(route) && (len(he.Fields["body"]) == 0 || he.Fields["body"][0].ID != "validation.body_too_large") {
		t.Errorf("%s: a body of %d bytes answered %v, want body_too_large", route, len(body), err)
	}
	// Rendering depends only on the messages, which repeat: check each set once.
	var key strings.Builder
	for _, field := range he.Order {
		for _, m := range he.Fields[field] {
			fmt.Fprintf(&key, "%s %v;", m.ID, m.Args)
		}
	}
	if _, done := rendered.LoadOrStore(key.String(), true); done {
		return
	}
	for _, lang := range decodeCatalog().Languages() {
		status, out, _ := s.errorBody(err, lang)
		if status != 422 || out.Message == "" || strings.Contains(out.Message, "<no value>") || out.Code != "validation_failed" {
			t.Errorf("%s: %q in %s renders as %d %+v", route, body, lang, status, out)
		}
		for field, texts := range out.Errors {
			for j, text := range texts {
				if text == he.Fields[field][j].ID || strings.Contains(text, "<no value>") {
					t.Errorf("%s: %q: field %s renders in %s as %q", route, body, field, lang, text)
				}
			}
		}
	}
}

// rendered holds the message sets checkDecodeError has rendered.
var rendered sync.Map

func maxOf(route string) int64 {
	for _, br := range bodyRoutes {
		if br.route == route {
			return br.max
		}
	}
	return 0
}

// jsonFields returns the JSON names of a struct's fields.
func jsonFields(dst any) map[string]bool {
	out := map[string]bool{}
	t := reflect.TypeOf(dst).Elem()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out[name] = true
	}
	return out
}

// topLevelKeys returns the member names of the object body starts with, duplicates
// included, as far as they can be read; and whether body is exactly one JSON object
// (RFC 8259: only space, tab, CR and LF around it).
func topLevelKeys(body []byte) ([]string, bool) {
	trimmed := bytes.Trim(body, " \t\r\n")
	isObject := len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(trimmed)
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, isObject
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		key, ok := tok.(string)
		if !ok {
			break
		}
		keys = append(keys, key)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			break
		}
	}
	return keys, isObject
}

// schemaShape returns what in body (a JSON object) does not fit schema's types,
// nullability and properties, or "". Rules that are not about shape (required,
// lengths, ranges) are the use cases'.
func schemaShape(schema *openapi3.Schema, body []byte) string {
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		return "not an object: " + err.Error()
	}
	err := schema.VisitJSON(any(v), openapi3.MultiErrors())
	var out []string
	var walk func(error)
	walk = func(err error) {
		var me openapi3.MultiError
		var se *openapi3.SchemaError
		switch {
		case errors.As(err, &me):
			for _, e := range me {
				walk(e)
			}
		case errors.As(err, &se):
			switch se.SchemaField {
			case "type", "additionalProperties", "items", "nullable":
				out = append(out, se.Error())
			}
		case err != nil:
			out = append(out, err.Error())
		}
	}
	walk(err)
	return strings.Join(out, "; ")
}
