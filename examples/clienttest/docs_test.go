package clienttest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// docsPage is the page these tests keep honest: its shell blocks run here, its Go
// blocks are quoted from this package, its YAML from the fixtures file.
const docsPage = "../../docs/testing-your-client.md"

// fencedBlocks returns the bodies of the page's fenced blocks of a language, in order.
func fencedBlocks(t *testing.T, page, lang string) []string {
	t.Helper()
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for rest := string(raw); ; {
		i := strings.Index(rest, "```"+lang+"\n")
		if i < 0 {
			return blocks
		}
		rest = rest[i+len("```"+lang+"\n"):]
		j := strings.Index(rest, "\n```")
		if j < 0 {
			t.Fatalf("%s: an unterminated %s block", page, lang)
		}
		blocks = append(blocks, rest[:j+1])
		rest = rest[j+4:]
	}
}

// TestDocsQuoteTheSuite: every Go block of the page is a verbatim excerpt of this
// package's files, and every YAML block one of the fixtures file: what the page
// shows is what runs.
func TestDocsQuoteTheSuite(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var sources []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, string(b))
	}
	fix, err := os.ReadFile(fixtures)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		lang    string
		sources []string
		min     int
	}{{"go", sources, 8}, {"yaml", []string{string(fix)}, 1}} {
		blocks := fencedBlocks(t, docsPage, c.lang)
		if len(blocks) < c.min {
			t.Errorf("%s has %d %s blocks, want at least %d", docsPage, len(blocks), c.lang, c.min)
		}
	block:
		for _, b := range blocks {
			for _, src := range c.sources {
				if strings.Contains(src, b) {
					continue block
				}
			}
			t.Errorf("this %s block of %s is quoted from nothing that runs (update it from the files):\n%s", c.lang, docsPage, b)
		}
	}
}

// TestDocsShellBlocks runs the page's shell blocks, in order, as one script (bash -e,
// pipefail): the first starts a berthd of this checkout as a client's CI would, on
// a port of its own, with the fixtures file beside it; the others call it with curl
// and check with jq. The script fails at the first command that fails.
func TestDocsShellBlocks(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq", "awk", "grep"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("*** SKIPPED: the shell examples of %s need %s on PATH (Debian: apt-get install curl jq) ***", docsPage, tool)
		}
	}
	blocks := fencedBlocks(t, docsPage, "sh")
	if len(blocks) < 5 {
		t.Fatalf("%s has %d shell blocks", docsPage, len(blocks))
	}
	script := strings.Join(blocks, "\n")
	const docAddr = "127.0.0.1:8080"
	if !strings.Contains(blocks[0], "berthd serve --sandbox --seed fixtures.yaml") || !strings.Contains(script, docAddr) {
		t.Fatalf("%s's first shell block no longer starts berthd on %s with fixtures.yaml: update this test", docsPage, docAddr)
	}
	addr, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	script = strings.ReplaceAll(script, docAddr, addr)
	work := t.TempDir()
	fix, err := os.ReadFile(fixtures)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "fixtures.yaml"), fix, 0o600); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-x", "-c", script)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(berthdBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	ownGroup(cmd) // the script's berthd goes with it, whatever happens
	out, err := cmd.CombinedOutput()
	log, _ := os.ReadFile(filepath.Join(work, "berthd.log"))
	if err != nil {
		t.Fatalf("the shell blocks of %s failed: %v\n%s\nberthd.log:\n%s", docsPage, err, out, log)
	}
	// curl does not fail on an error answer: a call the page shows as working that
	// failed on the server is in berthd's log as an error (beside the 503s the page
	// injects).
	for _, line := range strings.Split(string(log), "\n") {
		if strings.Contains(line, `"level":"ERROR"`) && !strings.Contains(line, "failed by a sandbox fault") {
			t.Errorf("berthd logged an error while the examples ran: %s", line)
		}
	}
	if t.Failed() {
		t.Logf("%s", out)
	}
}
