package tfprovider_test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestDocsUpToDate: docs/terraform is what scripts/terraform-docs.sh generates from
// the schema and examples/terraform now (`go generate ./internal/tfprovider` writes
// it). It needs OpenTofu, so it runs with the acceptance tests.
func TestDocsUpToDate(t *testing.T) {
	newAccSkip(t)
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command("../../scripts/terraform-docs.sh", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/terraform-docs.sh: %v\n%s", err, out)
	}
	committed := filepath.Join("..", "..", "docs", "terraform")
	files := func(root string) map[string][]byte {
		m := map[string][]byte{}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			m[rel], err = os.ReadFile(p)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	want, got := files(dir), files(committed)
	for name, w := range want {
		if g, ok := got[name]; !ok {
			t.Errorf("docs/terraform/%s is missing", name)
		} else if !bytes.Equal(g, w) {
			t.Errorf("docs/terraform/%s is stale", name)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("docs/terraform/%s is not generated any more", name)
		}
	}
	if t.Failed() {
		t.Log("run: go generate ./internal/tfprovider")
	}
}
