package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/internal/hosting"
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
			body := op.RequestBody.Value.Content.Get("application/json").Schema.Value
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
