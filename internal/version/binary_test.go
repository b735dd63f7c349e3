package version_test

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestBinariesPrintStampedVersion builds berthd, berth and terraform-provider-berth
// as make build does, with the version stamped through -ldflags, and runs each with
// --version: each prints the stamped version.
func TestBinariesPrintStampedVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the three binaries")
	}
	t.Parallel()
	const stamp = "v1.2.3-test.4+abc"
	dir := t.TempDir()
	for _, tc := range []struct{ pkg, want string }{
		{"berthd", "berthd version " + stamp + "\n"},
		{"berth", "berth version " + stamp + "\n"},
		{"terraform-provider-berth", "terraform-provider-berth " + stamp + "\n"},
	} {
		t.Run(tc.pkg, func(t *testing.T) {
			bin := filepath.Join(dir, tc.pkg)
			build := exec.Command("go", "build", "-o", bin,
				"-ldflags", "-X github.com/berthhq/berth/internal/version.Version="+stamp,
				"github.com/berthhq/berth/cmd/"+tc.pkg)
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("go build: %v\n%s", err, out)
			}
			out, err := exec.Command(bin, "--version").CombinedOutput()
			if err != nil || string(out) != tc.want {
				t.Errorf("%s --version: %v, %q; want %q", tc.pkg, err, out, tc.want)
			}
		})
	}
}

// TestBinaryUnstampedVersion builds berth without the stamp and without version
// control information (-buildvcs=false, as go run builds): --version says "devel",
// what the build info of such a build gives (TestFromBuildInfo has the others).
func TestBinaryUnstampedVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "berth")
	if out, err := exec.Command("go", "build", "-buildvcs=false", "-o", bin, "github.com/berthhq/berth/cmd/berth").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "--version").CombinedOutput(); err != nil || string(out) != "berth version devel\n" {
		t.Errorf("berth --version of an unstamped build: %v, %q; want \"berth version devel\\n\"", err, out)
	}
}
