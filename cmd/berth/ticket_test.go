package main

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/testenv"
)

func pngBytes(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 3, 3))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestTicketCommands: ticket create with --body-file and two --attach (a PNG by its
// extension, a log by its content), the thread describe shows oldest first with each
// file's id, name and size; a staff reply (answered), ticket reply from standard input
// (customer_reply), list and list --status as a table, -o json and -q; close; then
// attachment download into the current directory under the server's name, to -o FILE,
// into -o DIR and to -o -, byte for byte, never over an existing file without --force.
// The errors: another account's ticket (exit 3), a subject too long (exit 4 naming the
// field, nothing uploaded before a file that cannot be read), a token without tickets.
func TestTicketCommands(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	acct := env.NewAccount("en", "100", "")
	c := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.Token)
	c.ok("server", "create", "--plan", "s1-1c-1g", "--location", "fsn1", "--image", "ubuntu-24.04", "--display-name", "web-1")
	dir := t.TempDir()
	shot, logf, bodyf := filepath.Join(dir, "shot.png"), filepath.Join(dir, "boot"), filepath.Join(dir, "body.txt")
	img := pngBytes(t)
	for name, data := range map[string][]byte{shot: img, logf: []byte("kernel: disk error\n"), bodyf: []byte("The disk is slow.\nSince noon.\n")} {
		if err := os.WriteFile(name, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r := c.run("ticket", "create", "--subject", "Disk slow", "--body-file", bodyf, "--priority", "high", "--server", "web-1",
		"--attach", shot, "--attach", logf)
	if r.code != 0 || !strings.Contains(r.stderr, "Uploaded shot.png as attachment 1 (") || !strings.Contains(r.stderr, "Uploaded boot as attachment 2 (19 B)") ||
		!strings.Contains(r.stderr, "Ticket 1 opened\n") {
		t.Fatalf("ticket create: exit %d\n%s[stderr]\n%s", r.code, r.stdout, r.stderr)
	}
	if !regexp.MustCompile(`(?s)^id: +1\nsubject: +Disk slow\nstatus: +open\npriority: +high\n.*server_id: +\d+\n.*\n--- customer \([^)]+\), \d{4}-[0-9T:-]+Z, message 1\nThe disk is slow.\nSince noon.\nattachment 1: +shot.png +\d+ B +image/png\nattachment 2: +boot +19 B +text/plain\n$`).MatchString(r.stdout) {
		t.Errorf("ticket create:\n%s", r.stdout)
	}
	if _, err := env.App.Service.StaffReply(context.Background(), 1, ops.StaffAuthor{Name: "Ada"}, "Replaced the disk.", nil); err != nil {
		t.Fatal(err)
	}
	if got := tableRows(c.ok("ticket", "list", "-o", "columns=id,status,subject")); !equalRows(got, [][]string{{"1", "answered", "Disk", "slow"}}) {
		t.Errorf("ticket list after the staff reply: %q", got)
	}
	r = c.runIn("Thanks, it is fast again.\n", "ticket", "reply", "1", "--body-file", "-")
	if r.code != 0 || r.stderr != "Message 3 added to ticket 1\n" || !strings.Contains(r.stdout, "author:       customer\n") {
		t.Errorf("ticket reply: exit %d\n%s[stderr]\n%s", r.code, r.stdout, r.stderr)
	}
	thread := c.ok("ticket", "describe", "1")
	i, j, k := strings.Index(thread, "The disk is slow."), strings.Index(thread, "--- staff (Ada), "), strings.Index(thread, "Thanks, it is fast again.\n")
	if !(i > 0 && i < j && j < k) || !strings.Contains(thread, "status:      customer_reply\n") {
		t.Errorf("ticket describe, oldest first:\n%s", thread)
	}
	js := decode(t, c.ok("ticket", "describe", "1", "-o", "json")).(map[string]any)
	if msgs, _ := js["messages"].([]any); len(msgs) != 3 || js["subject"] != "Disk slow" {
		t.Errorf("ticket describe -o json (the API's data): %v", js)
	}
	c.ok("ticket", "create", "--subject", "Invoice", "--body", "Please send it again.")
	if got := tableRows(c.ok("ticket", "list", "--status", "open", "-o", "columns=id,subject")); !equalRows(got, [][]string{{"2", "Invoice"}}) {
		t.Errorf("ticket list --status open: %q", got)
	}
	if got := c.ok("ticket", "list", "-q"); got != "2\n1\n" {
		t.Errorf("ticket list -q (latest activity first): %q", got)
	}
	r = c.run("ticket", "close", "1")
	if r.code != 0 || r.stderr != "Ticket 1 closed\n" || !strings.Contains(r.stdout, "status:      closed\n") {
		t.Errorf("ticket close: exit %d\n%s[stderr]\n%s", r.code, r.stdout, r.stderr)
	}

	// Downloads.
	work := t.TempDir()
	dl := &cli{t: t, bin: c.bin, env: c.env, dir: work}
	dl.ok("attachment", "download", "1")
	if got, err := os.ReadFile(filepath.Join(work, "shot.png")); err != nil || !bytes.Equal(got, img) {
		t.Errorf("attachment download 1 into the current directory: %v", err)
	}
	if r := dl.run("attachment", "download", "1"); r.code != 1 || !strings.Contains(r.stderr, "shot.png exists: give --force") {
		t.Errorf("attachment download over an existing file: exit %d %s", r.code, r.stderr)
	}
	dl.ok("attachment", "download", "1", "--force")
	dl.ok("attachment", "download", "2", "-o", "boot.log")
	if got, _ := os.ReadFile(filepath.Join(work, "boot.log")); string(got) != "kernel: disk error\n" {
		t.Errorf("attachment download -o boot.log: %q", got)
	}
	sub := filepath.Join(work, "sub")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	dl.ok("attachment", "download", "2", "-o", "sub")
	if _, err := os.Stat(filepath.Join(sub, "boot")); err != nil {
		t.Errorf("attachment download -o DIR: %v", err)
	}
	if got := dl.ok("attachment", "download", "2", "-o", "-"); got != "kernel: disk error\n" {
		t.Errorf("attachment download -o -: %q", got)
	}

	// Errors.
	other := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+env.NewAccount("en", "100", "").Token)
	for _, args := range [][]string{{"ticket", "describe", "1"}, {"ticket", "reply", "1", "--body", "mine"}, {"ticket", "close", "1"},
		{"attachment", "download", "1", "-o", filepath.Join(work, "x")}} {
		if r := other.run(args...); r.code != exitNotFound {
			t.Errorf("berth %q of another account: exit %d, want 3\n%s", args, r.code, r.stderr)
		}
	}
	if r := c.run("ticket", "create", "--subject", strings.Repeat("s", 121), "--body", "b"); r.code != exitValidation || !strings.Contains(r.stderr, "subject") {
		t.Errorf("a subject of 121 characters: exit %d\n%s", r.code, r.stderr)
	}
	if r := c.run("ticket", "create", "--subject", "s", "--body", "b", "--attach", shot, "--attach", filepath.Join(dir, "missing")); r.code != 1 ||
		!strings.Contains(r.stderr, "--attach") || strings.Contains(r.stderr, "Uploaded") {
		t.Errorf("--attach of a missing file: exit %d\n%s", r.code, r.stderr)
	}
	if r := c.run("ticket", "create", "--subject", "s"); r.code != 1 || !strings.Contains(r.stderr, "body") {
		t.Errorf("ticket create without a body: exit %d\n%s", r.code, r.stderr)
	}
	reader := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.NewToken("read"))
	if r := reader.run("ticket", "create", "--subject", "s", "--body", "b"); r.code == 0 || !strings.Contains(r.stderr, "missing_scope") {
		t.Errorf("ticket create without the scope tickets: exit %d\n%s", r.code, r.stderr)
	}
	reader.ok("ticket", "describe", "1")
}

// TestSafeFilename: whatever name a server sends, the file is created where the user
// asked: no path, no control characters, not hidden, never "." or "..".
func TestSafeFilename(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"report.pdf":           "report.pdf",
		"../../etc/passwd":     "passwd",
		`..\..\boot.ini`:       "boot.ini",
		"..":                   "attachment",
		".bashrc":              "bashrc",
		"":                     "attachment",
		"a\x1b[2Jb\u202ec.txt": "a[2Jbc.txt",
		"C:evil":               "Cevil",
		"/":                    "attachment",
		"x\xff.txt":            "x.txt",
	} {
		if got := safeFilename(in); got != want {
			t.Errorf("safeFilename(%q) = %q, want %q", in, got, want)
		}
	}
}
