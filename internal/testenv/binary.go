package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sync"
	"testing"

	"github.com/berthhq/berth/internal/testwatch"
)

// The import paths of the binaries the tests run.
const (
	BerthdPackage = "github.com/berthhq/berth/cmd/berthd"
	BerthPackage  = "github.com/berthhq/berth/cmd/berth"
)

var binaries struct {
	mu    sync.Mutex
	dir   string // where they are built; removed by Main
	built map[string]func() (string, error)
}

// BuildBinary builds the command pkg (an import path) once per test process, with
// plain `go build` (no -race, no coverage: what GOFLAGS says) and returns the
// binary's path; it is named after pkg's last element. A failed build fails every
// test that asks for it. The package's TestMain must be Main, which removes the
// binaries when its tests end.
func BuildBinary(t testing.TB, pkg string) string {
	t.Helper()
	binaries.mu.Lock()
	build, ok := binaries.built[pkg]
	if !ok {
		build = sync.OnceValues(func() (string, error) {
			dir, err := binaryDir()
			if err != nil {
				return "", err
			}
			// A directory per package: two commands may end in the same name.
			sub, err := os.MkdirTemp(dir, "")
			if err != nil {
				return "", err
			}
			bin := filepath.Join(sub, path.Base(pkg))
			if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
				return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
			}
			return bin, nil
		})
		if binaries.built == nil {
			binaries.built = map[string]func() (string, error){}
		}
		binaries.built[pkg] = build
	}
	binaries.mu.Unlock()
	bin, err := build()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// binaryDir is the test process's directory of binaries, made the first time.
func binaryDir() (string, error) {
	binaries.mu.Lock()
	defer binaries.mu.Unlock()
	if binaries.dir == "" {
		dir, err := os.MkdirTemp("", "berth-test-bin-")
		if err != nil {
			return "", err
		}
		binaries.dir = dir
	}
	return binaries.dir, nil
}

// BerthdBinary is berthd built from this checkout (BuildBinary).
func BerthdBinary(t testing.TB) string {
	t.Helper()
	return BuildBinary(t, BerthdPackage)
}

// BerthBinary is the berth CLI built from this checkout (BuildBinary).
func BerthBinary(t testing.TB) string {
	t.Helper()
	return BuildBinary(t, BerthPackage)
}

// Main runs a package's tests, removes the binaries BuildBinary built for them and
// exits with the tests' code: the TestMain of a package whose tests build binaries.
func Main(m *testing.M) {
	testwatch.Start()
	code := m.Run()
	binaries.mu.Lock()
	if binaries.dir != "" {
		os.RemoveAll(binaries.dir)
	}
	binaries.mu.Unlock()
	os.Exit(code)
}
