package libvirtdriver_test

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/compute/computetest"
)

// shell types commands into a guest's shell on its serial console (the test
// image's) and reads their output.
type shell struct {
	t       testing.TB
	name    string
	con     io.ReadWriteCloser
	out     *computetest.Reader
	n       int
	timeout time.Duration
}

// openShell attaches to the serial console of a running machine whose guest is
// ready; each command may take up to timeout.
func openShell(t testing.TB, d compute.Driver, name string, timeout time.Duration) *shell {
	t.Helper()
	con, err := d.Console(context.Background(), name)
	if err != nil {
		t.Fatalf("console of %s: %v", name, err)
	}
	t.Cleanup(func() { con.Close() })
	s := &shell{t: t, name: name, con: con, out: computetest.Follow(con), timeout: timeout}
	s.ready()
	return s
}

// prompts are the shell's prompts: its own, and the one of a line left unfinished.
var prompts = regexp.MustCompile(`(^|\n)[#>] `)

// banner is what the test image's shell prints when it starts.
const banner = "built-in shell (ash)"

// ready types empty lines until the shell answers one with a prompt, before any
// Ctrl-C is typed: busybox's ash ends at a Ctrl-C that comes between its banner and
// its first prompt (the image's init starts another a second later, which reads only
// what is typed from then on). CI lost a command that way on a guest just restored,
// its shell starting as the test typed.
func (s *shell) ready() {
	s.t.Helper()
	deadline := time.Now().Add(s.timeout)
	for {
		from := len(s.out.Text())
		if _, err := io.WriteString(s.con, "\r"); err != nil {
			s.t.Fatalf("typing into %s: %v", s.name, err)
		}
		for wait := time.Now().Add(2 * time.Second); time.Now().Before(wait); time.Sleep(20 * time.Millisecond) {
			if prompts.MatchString(strings.ReplaceAll(escapes.ReplaceAllString(s.out.Text()[from:], ""), "\r", "")) {
				return
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: no shell prompt in %s:\n%s", s.name, s.timeout, s.out.Text())
		}
	}
}

// escapes are the terminal's control sequences (the shell asks where the cursor is).
var escapes = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// consoleLine is a line the guest writes to its console on its own, whatever the
// shell runs: the test image's udev logs each device it links (BERTH-UDEV), and the
// kernel its messages. They land between a command's markers when a device comes or
// goes while it runs.
var consoleLine = regexp.MustCompile(`^(BERTH-UDEV |\[ *[0-9]+\.[0-9]+\] )`)

// commandOutput is what a command printed, from the text between its markers: without
// the terminal's carriage returns and control sequences, and without the guest's
// console lines.
func commandOutput(text string) string {
	text = escapes.ReplaceAllString(strings.ReplaceAll(text, "\r", ""), "")
	lines := strings.Split(text, "\n")
	kept := lines[:0]
	for _, l := range lines {
		if !consoleLine.MatchString(l) {
			kept = append(kept, l)
		}
	}
	return strings.TrimSpace(strings.Join(kept, "\n"))
}

// run runs a command line in the guest and returns what it printed, without the
// carriage returns of the terminal (or fails the test after the shell's timeout).
func (s *shell) run(cmd string) string {
	s.t.Helper()
	out, err := s.try(cmd)
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

// try is run that answers an error instead of failing the test. The markers around
// the command are typed split by quotes, so that the shell's echo of the line never
// reads as them. Each line starts with a Ctrl-C, which makes the shell drop what it
// holds unfinished: text typed while the guest booted can reach it cut (the serial
// port's FIFO is cleared when the port is opened), and a cut line that leaves a quote
// open would turn every later line, quotes balanced, into more of the same string.
func (s *shell) try(cmd string) (string, error) {
	var begin, end string
	from, restarts := 0, 0
	typeLine := func() error {
		s.n++
		begin, end = fmt.Sprintf("@@BEGIN-%d@@", s.n), fmt.Sprintf("@@END-%d@@", s.n)
		from = len(s.out.Text())
		line := fmt.Sprintf("\x03echo @@BE''GIN-%d@@; %s; echo @@EN''D-%d@@\r", s.n, cmd, s.n)
		if _, err := io.WriteString(s.con, line); err != nil {
			return fmt.Errorf("typing into %s: %w", s.name, err)
		}
		return nil
	}
	if err := typeLine(); err != nil {
		return "", err
	}
	for deadline := time.Now().Add(s.timeout); ; time.Sleep(20 * time.Millisecond) {
		text := s.out.Text()[from:]
		if restarts < 3 && strings.Contains(text, banner) && !strings.Contains(text, begin) {
			// The shell the line went to ended before running it (the guest's own
			// doing: a reboot, a shell that exited): type it again to the next one.
			restarts++
			s.ready()
			if err := typeLine(); err != nil {
				return "", err
			}
			continue
		}
		if i := strings.Index(text, end); i >= 0 {
			text = text[:i]
			if b := strings.LastIndex(text, begin); b >= 0 {
				text = text[b+len(begin):]
			}
			return commandOutput(text), nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("%s: %q printed no end in %s:\n%s", s.name, cmd, s.timeout, text)
		}
	}
}

// leaveOpen types a line that leaves a quote open, as a line cut while the guest
// booted can, so that the shell waits for the rest of it.
func (s *shell) leaveOpen() {
	s.t.Helper()
	if _, err := io.WriteString(s.con, "echo 'a quote left open\r"); err != nil {
		s.t.Fatalf("typing into %s: %v", s.name, err)
	}
}

// await runs cmd until its output holds want (or fails the test after timeout), and
// returns that output.
func (s *shell) await(cmd, want string, timeout time.Duration) string {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		out := s.run(cmd)
		if strings.Contains(out, want) {
			return out
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: %q printed %q for %s, want %q in it", s.name, cmd, out, timeout, want)
		}
		time.Sleep(time.Second)
	}
}

// TestCommandOutput: what the guest's console prints on its own while a command runs
// (CI once read a volume as mounted from "BERTH-UDEV add sdb …\n0") is not the
// command's output; what the command printed is, line for line.
func TestCommandOutput(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"\r\n0\r\n", "0"},
		{"\r\nBERTH-UDEV add sdb /dev/disk/by-id/scsi-0BERTH_Volume_7003\r\n0\r\n", "0"},
		{"\r\n0\r\nBERTH-UDEV remove sdb /dev/disk/by-id/scsi-0BERTH_Volume_7003\r\n", "0"},
		{"\r\n[   12.345678] sd 0:0:0:1: [sdb] Attached SCSI disk\r\na\r\nb\r\n", "a\nb"},
		{"\r\n\x1b[6nroot\r\n", "root"},
		{"\r\nsaid BERTH-UDEV add\r\n", "said BERTH-UDEV add"},
		{"\r\n[not a kernel line]\r\n", "[not a kernel line]"},
		{"", ""},
	} {
		if got := commandOutput(c.text); got != c.want {
			t.Errorf("commandOutput(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}
