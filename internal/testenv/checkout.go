package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Checkout is a directory that stands for a fresh clone of this checkout, for a test
// that runs the README's steps as a new user would (make build, go build ./cmd/...,
// scripts/...): every top-level entry of the module's root is a symbolic link to the
// real one, except what a user's runs leave there (data/, artifacts/, the built
// binaries), which the test's steps make anew in the directory itself. Nothing the
// steps write reaches the checkout. Removed when the test ends.
func Checkout(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	root := filepath.Dir(strings.TrimSpace(string(out)))
	if err != nil || !filepath.IsAbs(root) {
		t.Fatalf("go env GOMOD: %q, %v", out, err)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, e := range entries {
		switch e.Name() {
		case ".git", "data", "artifacts", "berthd", "berth", "terraform-provider-berth":
			continue
		}
		if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// GoEnv is the environment the go command needs to build as this test process
// does (its caches, its module settings) when the test gives the command a HOME of
// its own: KEY=VALUE lines to add to that environment.
func GoEnv(t testing.TB) []string {
	t.Helper()
	keys := []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOFLAGS", "GOPROXY", "GONOSUMDB", "GOPRIVATE", "GOTOOLCHAIN", "GOROOT"}
	out, err := exec.Command("go", append([]string{"env"}, keys...)...).Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(keys) {
		t.Fatalf("go env printed %d lines for %d variables", len(lines), len(keys))
	}
	var env []string
	for i, k := range keys {
		env = append(env, k+"="+lines[i])
	}
	return env
}
