package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/sandbox"
)

// TestSchemaLimitsMatchRules: the limits the document states in its schemas (lengths,
// patterns) accept and refuse what Berth's own rules (internal/hosting) accept and
// refuse, for each field they apply to, at and around each limit (issue 14). Where a
// rule says more than a schema can (a name of Unicode spaces only, the snapshot
// prefix `auto-`, a script's size in bytes rather than characters, an id past
// 2^63-1), the schema is the looser and the prose says the rest; those inputs are not
// in these tables.
func TestSchemaLimitsMatchRules(t *testing.T) {
	t.Parallel()
	doc := loadDoc(t)

	label := func(s string) bool {
		var v hosting.Validation
		hosting.CheckLabel(&v, "f", s)
		return v.Empty()
	}
	labels := []string{
		"", " ", "   ", "a", " a ", "web-1", "a b", "日本", "ü",
		strings.Repeat("x", 63), strings.Repeat("x", 64), strings.Repeat("x", 65),
		strings.Repeat("ü", 64), strings.Repeat("ü", 65), strings.Repeat("日", 64), strings.Repeat("日", 65),
		" " + strings.Repeat("x", 63), " " + strings.Repeat("x", 64),
		"a\tb", "a\nb", "\r", "a\x00", "\x1f", "a\x7f", "\x7f", "tab\t", "é\u0085", "\u00a0x",
	}
	for _, field := range []string{
		"ServerCreate.display_name", "ServerUpdate.display_name", "SSHKeyCreate.name",
		"ProjectWrite.name", "RecipeWrite.name", "RecipeUpdate.name",
	} {
		compare(t, doc, field, label, labels)
	}

	snapshotName := func(s string) bool {
		var v hosting.Validation
		hosting.CheckSnapshotName(&v, "name", s)
		return v.Empty()
	}
	compare(t, doc, "SnapshotCreate.name", snapshotName, []string{
		"", "a", "ab", "a1", "A_b-c", "1ab", "-ab", "_ab", "a b", "äb", "aé", "a.b", "a/b",
		strings.Repeat("a", 40), strings.Repeat("a", 41), "before-upgrade", "automatic", "auto", "autox-1",
	})

	rootPassword := func(s string) bool {
		var v hosting.Validation
		hosting.CheckRootPassword(&v, "root_password", s)
		return v.Empty()
	}
	compare(t, doc, "ServerCreate.root_password", rootPassword, []string{
		"", "1234567", "12345678", "hunter2 hunter2", strings.Repeat("p", 72), strings.Repeat("p", 73),
		strings.Repeat("é", 8), strings.Repeat("é", 7), strings.Repeat("密", 72), strings.Repeat("密", 73),
		"12345678\x01", "1234\t5678", "12345678\x7f",
	})

	script := func(s string) bool { return strings.TrimSpace(s) != "" && len(s) <= hosting.RecipeScriptMax }
	for _, field := range []string{"RecipeWrite.script", "RecipeUpdate.script"} {
		compare(t, doc, field, script, []string{
			"", "#!/bin/sh\necho hi\n", strings.Repeat("x", hosting.RecipeScriptMax), strings.Repeat("x", hosting.RecipeScriptMax+1),
		})
	}

	// {id} of a server: a positive id as hosting.ParseID reads it, or a server name.
	serverRef := func(s string) bool { _, ok := hosting.ParseServerRef(s); return ok }
	param := doc.Components.Parameters["ServerID"].Value.Schema.Value
	for _, s := range []string{
		"1", "42", "9223372036854775807", "0", "00", "01", "+1", "-1", "1.0", "1e3", " 1", "x",
		"server-abc123", "server-a1b2c3", "server-ABC123", "server-abc12", "server-abc1234", "server-", "server-abc_12",
	} {
		if got, want := param.VisitJSON(s) == nil, serverRef(s); got != want {
			t.Errorf("parameter ServerID %q: schema accepts = %v, hosting.ParseServerRef accepts = %v", s, got, want)
		}
	}
}

// TestSandboxFaultLimitsMatchRules: the schema of a sandbox fault (POST
// /sandbox/v1/faults) accepts exactly the values of each field that the sandbox's
// rules accept, at and around each limit; the paths a fault may name are the
// document's /v1 paths that need a token.
func TestSandboxFaultLimitsMatchRules(t *testing.T) {
	t.Parallel()
	doc := loadDoc(t)
	var routes []sandbox.Route
	var paths []any
	for path, item := range doc.Paths.Map() {
		if len(item.Servers) > 0 { // the sandbox's own
			continue
		}
		for method, op := range item.Operations() {
			if method == "OPTIONS" || op.Security != nil && len(*op.Security) == 0 {
				continue
			}
			rt := sandbox.Route{Method: method, Path: path}
			for _, st := range sandbox.FaultStatuses {
				if op.Responses.Status(st) != nil {
					rt.Statuses = append(rt.Statuses, st)
				}
			}
			routes = append(routes, rt)
			paths = append(paths, path)
		}
	}
	schema := doc.Components.Schemas["SandboxFaultCreate"].Value
	// accepts says whether the rules take v for field, beside companion fields that
	// make the rest of one valid fault of its kind.
	accepts := func(field string, v any) bool {
		body := map[string]any{"status": 503}
		switch field {
		case "operation", "slow":
			body = map[string]any{"operation": "power", "slow": 2}
		case "fail":
			body = map[string]any{"operation": "power", "slow": 2}
			if v == true {
				delete(body, "slow")
			}
		case "status":
			body = map[string]any{}
		}
		body[field] = v
		raw, _ := json.Marshal(body)
		var in api.SandboxFaultCreate
		if err := json.Unmarshal(raw, &in); err != nil {
			return false
		}
		_, err := sandbox.New().AddFault(1, sandbox.FaultSpec{Method: in.Method, Path: in.Path, Status: in.Status,
			DelayMS: in.DelayMS, Operation: in.Operation, Fail: in.Fail, Slow: in.Slow, Times: in.Times,
			Probability: in.Probability}, routes)
		var he *hosting.Error
		if err != nil && !errors.As(err, &he) {
			t.Fatalf("%s = %v: %v", field, v, err)
		}
		return he == nil || len(he.Fields[field]) == 0
	}
	for field, values := range map[string][]any{
		"method":      {"GET", "POST", "PATCH", "DELETE", "*", "PUT", "get", "", "HEAD"},
		"path":        append(paths, "*", "/v1/me", "/servers/1", "", "/openapi.json", "/faults"),
		"status":      {0, 200, 404, 409, 429, 500, 503, 504, -1},
		"delay_ms":    {-1, 0, 1, 29999, 30000, 30001, 1.5},
		"operation":   {"provision", "power", "reinstall", "rescale", "snapshot", "restore", "delete", "reboot", ""},
		"fail":        {true, false},
		"slow":        {-1, 0, 0.001, 1, 9.999, 10, 10.001},
		"times":       {-1, 0, 1, 999999, 1000000, 1000001, 2.5},
		"probability": {-0.001, 0, 0.5, 1, 1.001},
	} {
		prop := schema.Properties[field]
		if prop == nil {
			t.Errorf("SandboxFaultCreate.%s: no such property", field)
			continue
		}
		for _, v := range values {
			jv := v
			if n, ok := v.(int); ok {
				jv = float64(n)
			}
			if got, want := prop.Value.VisitJSON(jv) == nil, accepts(field, v); got != want {
				t.Errorf("SandboxFaultCreate.%s = %v: schema accepts = %v, the rules accept = %v", field, v, got, want)
			}
		}
	}
}

// compare checks that the schema of field ("Schema.property") accepts exactly the
// inputs that rule accepts.
func compare(t *testing.T, doc *openapi3.T, field string, rule func(string) bool, inputs []string) {
	t.Helper()
	schemaName, prop, _ := strings.Cut(field, ".")
	ref := doc.Components.Schemas[schemaName]
	if ref == nil || ref.Value.Properties[prop] == nil {
		t.Fatalf("%s: no such schema property", field)
	}
	schema := ref.Value.Properties[prop].Value
	if schema.MaxLength == nil {
		t.Errorf("%s: no maxLength in the schema", field)
	}
	for _, s := range inputs {
		if got, want := schema.VisitJSON(s) == nil, rule(s); got != want {
			t.Errorf("%s = %s: schema accepts = %v, the rule accepts = %v", field, quote(s), got, want)
		}
	}
}

func quote(s string) string {
	if len(s) > 40 {
		return fmt.Sprintf("%.20q... (%d bytes)", s, len(s))
	}
	return fmt.Sprintf("%q", s)
}

func loadDoc(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(api.OpenAPIYAML)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestIDsArePositive: every id a request can carry — a body field named id or *_id,
// the items of a *_ids list, an id in a query or a path — is an int64 of at least 1
// in the document (or, for a server's {id}, a pattern of positive ids and names), as
// Berth reads them: 0 and negative ids name nothing.
func TestIDsArePositive(t *testing.T) {
	t.Parallel()
	doc := loadDoc(t)
	positive := func(where string, s *openapi3.Schema) {
		t.Helper()
		if s.Pattern != "" && s.Type.Is("string") {
			return // ServerID: checked against hosting.ParseServerRef above
		}
		if !s.Type.Is("integer") || s.Format != "int64" || s.Min == nil || *s.Min != 1 {
			t.Errorf("%s: type %v format %q minimum %v, want an int64 of at least 1", where, s.Type, s.Format, s.Min)
		}
	}
	isID := func(name string) bool { return name == "id" || strings.HasSuffix(name, "_id") }
	seen := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			params := append(openapi3.Parameters{}, item.Parameters...)
			params = append(params, op.Parameters...)
			for _, p := range params {
				if name := p.Value.Name; isID(name) || name == "snapshot" {
					positive(fmt.Sprintf("%s %s parameter %s", method, path, name), p.Value.Schema.Value)
					seen++
				}
			}
			if op.RequestBody == nil {
				continue
			}
			mt := op.RequestBody.Value.Content.Get("application/json")
			if mt == nil {
				continue // a text body (a zone file) carries no ids
			}
			body := mt.Schema.Value
			for name, prop := range body.Properties {
				where := fmt.Sprintf("%s %s body %s", method, path, name)
				switch {
				case isID(name):
					positive(where, prop.Value)
					seen++
				case strings.HasSuffix(name, "_ids"):
					positive(where+"[]", prop.Value.Items.Value)
					seen++
				}
			}
		}
	}
	if seen < 20 {
		t.Errorf("only %d ids found: is the walk still finding them?", seen)
	}
}
