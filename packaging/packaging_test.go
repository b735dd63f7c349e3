// Package packaging holds what the release packages install beside the programs
// (.goreleaser.yaml): the systemd unit, the environment file and the .deb scripts.
// Its test keeps docs/operating.md's copies of them true.
package packaging

import (
	"os"
	"strings"
	"testing"
)

// TestOperatingDocShowsPackagedFiles: docs/operating.md's "systemd" section shows the
// packaged unit and environment file as they are, so the page cannot drift from
// what the .deb installs.
func TestOperatingDocShowsPackagedFiles(t *testing.T) {
	doc, err := os.ReadFile("../docs/operating.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## systemd\n")
	if !ok {
		t.Fatal(`docs/operating.md has no "## systemd" section`)
	}
	if next := strings.Index(section, "\n## "); next >= 0 {
		section = section[:next]
	}
	for _, tc := range []struct{ file, fence string }{
		{"systemd/berthd.service", "```ini\n"},
		{"berthd.env", "```sh\n"},
	} {
		want, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(section, tc.fence+string(want)+"```\n") {
			t.Errorf("docs/operating.md, \"systemd\", has no %s block equal to packaging/%s: copy the file there as it is",
				strings.TrimSpace(tc.fence), tc.file)
		}
	}
}
