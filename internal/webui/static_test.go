package webui_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestVendoredFiles: the vendored files of static/ are the ones its README names,
// byte for byte (the README says where each came from and how to update it).
func TestVendoredFiles(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join("static", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	sums := regexp.MustCompile(`(?m)^([0-9a-f]{64})  (\S+)$`).FindAllStringSubmatch(string(readme), -1)
	if len(sums) < 3 {
		t.Fatalf("static/README.md lists %d checksums; want those of xterm.mjs, xterm.css and its licence", len(sums))
	}
	for _, m := range sums {
		b, err := os.ReadFile(filepath.Join("static", m[2]))
		if err != nil {
			t.Errorf("%s: %v", m[2], err)
			continue
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != m[1] {
			t.Errorf("static/%s is not the file static/README.md names (sha256 %x, want %s)", m[2], sum, m[1])
		}
	}
}
