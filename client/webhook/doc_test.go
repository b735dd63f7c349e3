package webhook_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"testing"
)

// TestDocGoExample keeps the Go receiver of docs/webhooks.md the one the example runs.
func TestDocGoExample(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "example_test.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var code string
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "newReceiver" {
			code = string(src[fset.Position(fn.Doc.Pos()).Offset:fset.Position(fn.End()).Offset]) + "\n"
		}
	}
	md, err := os.ReadFile("../../docs/webhooks.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- go: newReceiver -->\n```go\n(.*?)```\n").FindSubmatch(md)
	if code == "" || m == nil {
		t.Fatalf("newReceiver in example_test.go: %t; its block in docs/webhooks.md: %t", code != "", m != nil)
	}
	if string(m[1]) != code {
		t.Errorf("docs/webhooks.md shows another receiver than example_test.go runs:\n%s\nwant:\n%s", m[1], code)
	}
}
