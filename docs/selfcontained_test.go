// Package docs_test checks that the repository's text stands on its own.
package docs_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoOutsideReferences: the README, the docs and the code cite only what is in
// the repository (issue 33). The team's contract and decision files live beside it,
// not in it: a reader of a clone, or of a release archive, has neither.
func TestNoOutsideReferences(t *testing.T) {
	outside := [][]byte{[]byte("SPEC.md"), []byte("API-DECISIONS")}
	roots := []string{"../README.md", ".", "../cmd", "../internal", "../client", "../api", "../examples"}
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasSuffix(path, "selfcontained_test.go") {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, o := range outside {
				if i := bytes.Index(b, o); i >= 0 {
					t.Errorf("%s:%d cites %s, which is not in the repository", path, 1+bytes.Count(b[:i], []byte("\n")), o)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
