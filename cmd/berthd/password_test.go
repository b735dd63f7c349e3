package main

import (
	"bytes"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/berthhq/berth/internal/testenv"
)

// TestAccountPasswordOffTheCommandLine: admin account create takes the console
// password from stdin (--password-stdin, its first line) or asks for it twice on a
// terminal without echo (script(1) gives it one), and refuses without either; each
// account's stored hash is of the password given, and --password still works.
func TestAccountPasswordOffTheCommandLine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	data := t.TempDir()
	store := storeFlags(t, data)
	runJSON(t, bin, append([]string{"migrate"}, store...)...)
	create := func(stdin, email string, extra ...string) (string, string, int) {
		t.Helper()
		cmd := exec.Command(bin, append(append([]string{"admin", "account", "create", "--email", email}, extra...), store...)...)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if e, ok := err.(*exec.ExitError); ok {
			code = e.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), code
	}
	for _, tt := range []struct {
		name, stdin, email string
		extra              []string
		stderr             string // "": it succeeds
	}{
		{"stdin", "from-stdin-pw\nsecond line\n", "stdin@example.com", []string{"--password-stdin"}, ""},
		{"stdin CRLF, no end", "crlf-stdin-pw\r\n", "crlf@example.com", []string{"--password-stdin"}, ""},
		{"flag", "", "flag@example.com", []string{"--password", "from-flag-pw"}, ""},
		{"empty stdin", "", "empty@example.com", []string{"--password-stdin"}, "stdin holds no password"},
		{"short on stdin", "short\n", "short@example.com", []string{"--password-stdin"}, "password"},
		{"both", "x-password\n", "both@example.com", []string{"--password-stdin", "--password", "from-flag-pw"}, "none of the others can be"},
		{"no terminal", "from-stdin-pw\n", "none@example.com", nil, "--password-stdin"},
	} {
		_, stderr, code := create(tt.stdin, tt.email, tt.extra...)
		if tt.stderr == "" && code != 0 || tt.stderr != "" && (code == 0 || !strings.Contains(stderr, tt.stderr)) {
			t.Errorf("%s: exit %d, stderr %q; want %q", tt.name, code, stderr, tt.stderr)
		}
	}

	// On a terminal: asked twice, echoed never.
	if _, err := exec.LookPath("script"); err != nil {
		t.Log("no script(1): the prompt is not tried")
	} else {
		prompted := func(first, second string) string {
			t.Helper()
			line := bin + " admin account create --email tty@example.com " + strings.Join(store, " ")
			cmd := exec.Command("script", "-qec", line, "/dev/null")
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			pr, pw := io.Pipe()
			cmd.Stdout, cmd.Stderr = pw, pw
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			go func() { _ = cmd.Wait(); pw.Close() }()
			var out bytes.Buffer
			buf := make([]byte, 4096)
			for _, answer := range []struct{ prompt, typed string }{{"Password: ", first}, {"Password again: ", second}} {
				for !strings.Contains(out.String(), answer.prompt) {
					n, err := pr.Read(buf)
					out.Write(buf[:n])
					if err != nil {
						t.Fatalf("no prompt %q: %q %v", answer.prompt, out.String(), err)
					}
				}
				time.Sleep(300 * time.Millisecond) // echo is off a moment after the prompt
				out.Reset()
				_, _ = io.WriteString(stdin, answer.typed+"\n")
			}
			defer stdin.Close()
			rest, _ := io.ReadAll(pr)
			return out.String() + string(rest)
		}
		if out := prompted("typed-at-tty", "typed-otherwise"); !strings.Contains(out, "the two passwords differ") {
			t.Errorf("two different passwords typed: %q", out)
		}
		out := prompted("typed-at-tty", "typed-at-tty")
		if !strings.Contains(out, `"email":"tty@example.com"`) && !strings.Contains(out, `"email": "tty@example.com"`) || strings.Contains(out, "typed-at-tty") {
			t.Errorf("account create on a terminal: %q (want the account, the password not echoed)", out)
		}
	}

	db, _, rebind := storeDB(t, data)
	defer db.Close()
	for email, want := range map[string]string{"stdin@example.com": "from-stdin-pw", "crlf@example.com": "crlf-stdin-pw",
		"flag@example.com": "from-flag-pw", "tty@example.com": "typed-at-tty"} {
		if email == "tty@example.com" {
			if _, err := exec.LookPath("script"); err != nil {
				continue
			}
		}
		var hash string
		if err := db.QueryRow(rebind(`SELECT password_hash FROM accounts WHERE email = ?`), email).Scan(&hash); err != nil {
			t.Errorf("%s: %v", email, err)
			continue
		}
		if bcrypt.CompareHashAndPassword([]byte(hash), []byte(want)) != nil {
			t.Errorf("%s: the stored password is not %q", email, want)
		}
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM accounts`).Scan(&n); err != nil || n != 4 {
		t.Errorf("%d accounts (%v), want the 4 created", n, err)
	}
}
