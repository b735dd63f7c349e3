package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTokenStdin: context create --token-stdin takes one line of visible characters
// without spaces, a final newline (or CRLF) allowed, and refuses anything else (a
// space, a second line, nothing) without saving a context or showing the input.
func TestTokenStdin(t *testing.T) {
	t.Parallel()
	const tok = "berth_Zm9vYmFyYmF6cXV4LXRva2VuLW9mLXRoZS10ZXN0LTEyMzQ"
	for _, tt := range []struct {
		name, stdin string
		err         string // "": accepted
	}{
		{"newline", tok + "\n", ""},
		{"CRLF", tok + "\r\n", ""},
		{"no newline", tok, ""},
		{"space inside", "berth_Zm9v YmFy\n", "holds a space"},
		{"space before", " " + tok + "\n", "holds a space"},
		{"space after", tok + " \n", "holds a space"},
		{"tab", tok + "\t\n", "holds a space or a tab"},
		{"two lines", tok + "\nberth_second\n", "more than one line"},
		{"two newlines", tok + "\n\n", "more than one line"},
		{"lone CR", tok + "\r", "not a visible ASCII character (0x0d"},
		{"escape", tok + "\x1b[2J\n", "not a visible ASCII character (0x1b"},
		{"not ASCII", "berth_é\n", "not a visible ASCII character"},
		{"empty", "", "empty token"},
		{"only a newline", "\n", "empty token"},
		{"too long", strings.Repeat("x", 5000), "longer than 4096 bytes"},
	} {
		c := newCLI(t)
		r := c.runIn(tt.stdin, "context", "create", "prod", "--url", "http://127.0.0.1:1/v1", "--token-stdin")
		cfg, _ := os.ReadFile(filepath.Join(strings.TrimPrefix(c.env[1], "XDG_CONFIG_HOME="), "berth", "config.toml"))
		if tt.err == "" {
			if r.code != 0 || !strings.Contains(string(cfg), "token = \""+tok+"\"\n") {
				t.Errorf("%s: exit %d %q, config %q; want the context saved with the token", tt.name, r.code, r.stderr, cfg)
			}
			continue
		}
		if r.code != 1 || !strings.Contains(r.stderr, "--token-stdin: ") || !strings.Contains(r.stderr, tt.err) || len(cfg) != 0 {
			t.Errorf("%s: exit %d %q, config %q; want 1 and %q, no context", tt.name, r.code, r.stderr, cfg, tt.err)
		}
		if len(tt.stdin) > 8 && strings.Contains(r.stderr, strings.TrimSpace(tt.stdin)[:8]) {
			t.Errorf("%s: the error shows the input: %q", tt.name, r.stderr)
		}
	}
}

// TestTokenElsewhere: a token from --token, BERTH_TOKEN or a context file is held to
// the same rule, before anything is sent; the error names where it came from.
func TestTokenElsewhere(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	for _, tt := range []struct {
		c    *cli
		args []string
		from string
	}{
		{c, []string{"me", "--url", "http://127.0.0.1:1/v1", "--token", "berth_a b"}, "the token of --token: the token holds a space"},
		{&cli{t: t, bin: c.bin, env: append(append([]string{}, c.env...), "BERTH_TOKEN=berth_a\nberth_b")},
			[]string{"me", "--url", "http://127.0.0.1:1/v1"}, "the token of BERTH_TOKEN: the token is more than one line"},
	} {
		if r := tt.c.run(tt.args...); r.code != 1 || !strings.Contains(r.stderr, tt.from) || strings.Contains(r.stderr, "connection refused") {
			t.Errorf("berth %q: exit %d %q, want 1 and %q", tt.args, r.code, r.stderr, tt.from)
		}
	}
	dir := filepath.Join(strings.TrimPrefix(c.env[1], "XDG_CONFIG_HOME="), "berth")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := "current_context = \"hand\"\n[contexts.hand]\nurl = \"http://127.0.0.1:1/v1\"\ntoken = \"berth_a b\"\n"
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := c.run("me"); r.code != 1 || !strings.Contains(r.stderr, "the token of context hand in ") || !strings.Contains(r.stderr, "holds a space") {
		t.Errorf("a context file's token with a space: exit %d %q", r.code, r.stderr)
	}
}
