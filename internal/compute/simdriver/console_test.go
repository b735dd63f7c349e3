package simdriver_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/compute/computetest"
	"github.com/berthhq/berth/internal/compute/simdriver"
	"github.com/berthhq/berth/internal/store/sqlstore/sqlstoretest"
)

func TestConsoleConformance(t *testing.T) {
	t.Parallel()
	computetest.ExerciseConsole(t, computetest.ConsoleOptions{Ready: "server-cons01 login: "}, func(t *testing.T) compute.Driver {
		db := sqlstoretest.SQLite(t, t.TempDir(), simdriver.Storage())
		return simdriver.New(db.WriteDB(), 0.0001, db.Rebind)
	})
}

// The simulated console is a login prompt in front of a terminal's line discipline:
// what it prints for what is typed.
func TestConsoleLoginPrompt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqlstoretest.SQLite(t, t.TempDir(), simdriver.Storage())
	d := simdriver.New(db.WriteDB(), 0.0001, db.Rebind)
	if _, err := d.Create(ctx, "create", compute.Spec{Name: "server-login1", VCPUs: 1, MemoryMB: 512, DiskGB: 10, Image: "ubuntu-24.04"}); err != nil {
		t.Fatal(err)
	}
	const prompt = "server-login1 login: "
	for _, tc := range []struct {
		name, typed, want string
	}{
		{"echo", "root", "root"},
		{"enter asks for a password", "root\r", "root\r\nPassword: "},
		{"the password is not echoed and the login fails", "root\rsecret\r", "root\r\nPassword: \r\n\r\nLogin incorrect\r\n" + prompt},
		{"an empty line prompts again", "\r", "\r\n" + prompt},
		{"backspace erases", "rooX\x7ft", "rooX\b \bt"},
		{"backspace at the start does nothing", "\x7fa", "a"},
		{"ctrl-c starts over", "ad\x03", "ad^C\r\n" + prompt},
		{"UTF-8 passes through", "zoë", "zoë"},
		{"other control characters are dropped", "a\x1bb", "ab"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			con, err := d.Console(ctx, "server-login1")
			if err != nil {
				t.Fatal(err)
			}
			defer con.Close()
			out := computetest.Follow(con)
			at := out.Wait(t, 0, prompt, 5*time.Second)
			if !strings.Contains(out.Text()[:at], "Linux version") || !strings.Contains(out.Text()[:at], "ubuntu-24.04") {
				t.Errorf("boot lines: %q", out.Text()[:at])
			}
			if _, err := io.WriteString(con, tc.typed); err != nil {
				t.Fatal(err)
			}
			end := out.Wait(t, at, tc.want, 5*time.Second)
			if got := out.Text()[at:end]; got != tc.want {
				t.Errorf("typed %q: printed %q, want %q", tc.typed, got, tc.want)
			}
		})
	}
}

// A reset prints the boot again on a console that stays attached.
func TestConsoleFollowsAReset(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqlstoretest.SQLite(t, t.TempDir(), simdriver.Storage())
	d := simdriver.New(db.WriteDB(), 0.001, db.Rebind)
	if _, err := d.Create(ctx, "create", compute.Spec{Name: "server-reset1", VCPUs: 1, MemoryMB: 512, DiskGB: 10, Image: "debian-12"}); err != nil {
		t.Fatal(err)
	}
	con, err := d.Console(ctx, "server-reset1")
	if err != nil {
		t.Fatal(err)
	}
	defer con.Close()
	out := computetest.Follow(con)
	at := out.Wait(t, 0, "login: ", 5*time.Second)
	if err := d.Reset(ctx, "reset", "server-reset1"); err != nil {
		t.Fatal(err)
	}
	at = out.Wait(t, at, "reboot: Restarting system", 5*time.Second)
	out.Wait(t, at, "server-reset1 login: ", 5*time.Second)
}
