package main

import (
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/compute/simdriver"
	"github.com/berthhq/berth/internal/testenv"
)

// serverInFsn1 orders a server in fsn1 and returns its name and id.
func serverInFsn1(t *testing.T, c *cli) (name, id string) {
	t.Helper()
	srv := c.ok("server", "create", "--plan", "s1-1c-1g", "--location", "fsn1", "--image", "ubuntu-24.04", "-o", "json")
	return field(t, srv, "name").(string), jsonString(field(t, srv, "id"))
}

// tableRows are the rows of a table, each as its fields, the header left out.
func tableRows(table string) [][]string {
	var rows [][]string
	for i, line := range strings.Split(strings.TrimSuffix(table, "\n"), "\n") {
		if i > 0 {
			rows = append(rows, strings.Fields(line))
		}
	}
	return rows
}

// TestVolumeCommands: a volume made on a server by its name (waited for, attached,
// formatted) and one in a location by name, in a project; list shows locations and
// servers by name and narrows by server and project; attach by the server's id,
// resize, detach and update each wait and print the volume as it then is; delete by
// name. Then the errors a user meets: a 422 naming each field (exit 4), a name of no
// volume (404, exit 3) and of no server (exit 3), an attached volume's deletion and a
// shrink refused on their fields.
func TestVolumeCommands(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	acct := env.NewAccount("en", "100", "")
	c := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.Token)
	c.ok("project", "create", "web")
	srv, srvID := serverInFsn1(t, c)

	r := c.run("volume", "create", "--name", "data", "--size", "10", "--server", srv, "--format", "ext4", "--automount",
		"-o", "columns=id,name,size_gb,location,server,status,format")
	if want := "id:        1\nname:      data\nsize_gb:   10\nlocation:  fsn1\nserver:    " + srv + "\nstatus:    available\nformat:    ext4\n"; r.code != 0 ||
		r.stdout != want || !strings.Contains(r.stderr, "Waiting for operation") || !strings.Contains(r.stderr, "(create_volume) of volume data succeeded") {
		t.Fatalf("volume create on a server: exit %d\n%s[stderr]\n%s\nwant:\n%s", r.code, r.stdout, r.stderr, want)
	}
	logs := c.ok("volume", "create", "--name", "logs", "--size", "10", "--location", "fsn1", "--project", "web", "-o", "json")
	if field(t, logs, "server_id") != nil || field(t, logs, "status") != "available" || field(t, logs, "format") != nil || field(t, logs, "project_id") == nil {
		t.Errorf("volume create in a location: %s", logs)
	}
	table := c.ok("volume", "list")
	if !strings.HasPrefix(table, "ID ") || !regexp.MustCompile(`^ID +NAME +SIZE_GB +LOCATION +SERVER +STATUS +FORMAT\n`).MatchString(table) {
		t.Errorf("volume list's header:\n%s", table)
	}
	if got, want := tableRows(table), [][]string{{"1", "data", "10", "fsn1", srv, "available", "ext4"}, {"2", "logs", "10", "fsn1", "-", "available", "-"}}; !equalRows(got, want) {
		t.Errorf("volume list:\n%s\nwant rows %q", table, want)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"volume", "list", "--server", srv, "-q"}, "1\n"},
		{[]string{"volume", "list", "--project", "web", "-q"}, "2\n"},
		{[]string{"volume", "attach", "logs", "--server", srvID, "-o", "columns=server,status"}, "server:  " + srv + "\nstatus:  available\n"},
		{[]string{"volume", "resize", "logs", "--size", "20", "-o", "columns=size_gb"}, "size_gb:  20\n"},
		{[]string{"volume", "detach", "logs", "-o", "columns=server,server_id"}, "server:     -\nserver_id:  -\n"},
		{[]string{"volume", "update", "logs", "--name", "archive", "--no-project", "-o", "columns=name,project_id"}, "name:        archive\nproject_id:  -\n"},
		{[]string{"volume", "describe", "2", "-o", "columns=name,size_gb"}, "name:     archive\nsize_gb:  20\n"},
	} {
		if got := c.ok(tt.args...); got != tt.want {
			t.Errorf("berth %q:\n%s\nwant:\n%s", tt.args, got, tt.want)
		}
	}
	if r := c.run("volume", "delete", "archive"); r.code != 0 || r.stderr != "Volume archive deleted\n" {
		t.Errorf("volume delete archive: exit %d, %q", r.code, r.stderr)
	}
	volumeErrors(t, c, srv)
}

func equalRows(a, b [][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if strings.Join(a[i], "\t") != strings.Join(b[i], "\t") {
			return false
		}
	}
	return true
}

// volumeErrors: what a user meets, with volume data attached to srv.
func volumeErrors(t *testing.T, c *cli, srv string) {
	t.Helper()
	for _, tt := range []struct {
		args   []string
		code   int
		stderr []string
	}{
		{[]string{"volume", "create", "--size", "5"}, 4, []string{"(422 validation_failed)", "  name: ", "  size_gb: Must be between 10 and 10240 GB.", "  location_id: "}},
		{[]string{"volume", "create", "--name", "x", "--size", "10", "--location", "fsn1", "--format", "ntfs"}, 4, []string{"  format: "}},
		{[]string{"volume", "create", "--name", "x", "--size", "10", "--location", "fsn1", "--automount"}, 4, []string{"  automount: "}},
		{[]string{"volume", "describe", "nope"}, 3, []string{"(404 not_found)"}},
		{[]string{"volume", "describe", "archive"}, 3, []string{"(404 not_found)"}},
		{[]string{"volume", "attach", "data", "--server", "nope"}, 3, []string{`no server "nope" (berth server list)`}},
		{[]string{"volume", "create", "--name", "x", "--size", "10", "--server", "nope"}, 3, []string{`no server "nope"`}},
		{[]string{"volume", "list", "--project", "nope"}, 3, []string{`no project "nope"`}},
		{[]string{"volume", "delete", "data"}, 4, []string{"  server_id: The volume is attached"}},
		{[]string{"volume", "resize", "data", "--size", "10"}, 4, []string{"  size_gb: A volume only grows: give more than 10 GB."}},
		{[]string{"volume", "attach", "data", "--server", srv}, 4, []string{"  server_id: The volume is attached to server"}},
		{[]string{"volume", "attach", "data"}, 1, []string{`required flag(s) "server" not set`}},
	} {
		r := c.run(tt.args...)
		if r.code != tt.code || r.stdout != "" {
			t.Errorf("berth %q: exit %d, want %d\n%s[stderr]\n%s", tt.args, r.code, tt.code, r.stdout, r.stderr)
		}
		for _, s := range tt.stderr {
			if !strings.Contains(r.stderr, s) {
				t.Errorf("berth %q: stderr %q lacks %q", tt.args, r.stderr, s)
			}
		}
	}
	if got := c.ok("volume", "list", "-q"); got != "1\n" {
		t.Errorf("volumes after the errors: %q", got)
	}
}

// TestVolumeBusyAndHeld: a detach the guest does not release holds the volume and its
// server until its timeout: the volume's and the server's other changes meanwhile are
// 409 busy naming the operation to wait for (exit 5), and the detach, awaited, ends in
// error (exit 7) with the volume still attached. Released, it detaches.
func TestVolumeBusyAndHeld(t *testing.T) {
	t.Parallel()
	var holds atomic.Bool
	// At 0.1, the guest's 60 s to release a volume are 6 s: the window of the busy calls.
	env := testenv.New(t, testenv.Options{SimTimeScale: 0.1, WrapDriver: func(d compute.Driver) compute.Driver {
		d.(*simdriver.Driver).GuestHolds = func(string, string) bool { return holds.Load() }
		return d
	}})
	acct := env.NewAccount("en", "100", "")
	c := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.Token)
	srv, _ := serverInFsn1(t, c)
	c.ok("volume", "create", "--name", "data", "--size", "10", "--server", srv, "--format", "xfs", "--automount")

	holds.Store(true)
	r := c.run("volume", "detach", "data", "--no-wait", "-o", "columns=operation")
	m := regexp.MustCompile(`^operation:  (\d+) \(detach_volume\)\n$`).FindStringSubmatch(r.stdout)
	if r.code != 0 || m == nil || r.stderr != "" {
		t.Fatalf("volume detach --no-wait: exit %d\n%s[stderr]\n%s", r.code, r.stdout, r.stderr)
	}
	op := m[1]
	for _, args := range [][]string{{"volume", "resize", "data", "--size", "20"}, {"server", "poweroff", srv}} {
		r := c.run(args...)
		if want := "  operation " + op + " (detach_volume) is running: berth operation wait " + op + "\n"; r.code != 5 ||
			!strings.Contains(r.stderr, "(409 busy)") || !strings.HasSuffix(r.stderr, want) {
			t.Errorf("berth %q while the detach runs: exit %d, stderr %q; want 5 and %q", args, r.code, r.stderr, want)
		}
	}
	if r := c.run("operation", "wait", op, "-o", "columns=status"); r.code != 7 || r.stdout != "status:  error\n" {
		t.Errorf("operation wait %s of a detach the guest refused: exit %d\n%s[stderr]\n%s", op, r.code, r.stdout, r.stderr)
	}
	r = c.run("volume", "detach", "data")
	if r.code != 7 || r.stdout != "" || !strings.Contains(r.stderr, "(detach_volume) of volume data failed after") ||
		!strings.Contains(r.stderr, "ended in error") {
		t.Errorf("volume detach the guest refuses: exit %d\n%s[stderr]\n%s", r.code, r.stdout, r.stderr)
	}
	if got := c.ok("volume", "describe", "data", "-o", "columns=server"); got != "server:  "+srv+"\n" {
		t.Errorf("after the refused detaches: %q", got)
	}
	holds.Store(false)
	if got := c.ok("volume", "detach", "data", "-o", "columns=server"); got != "server:  -\n" {
		t.Errorf("detach once released: %q", got)
	}
}

// TestOperationListByVolume: operation list --volume keeps one volume's operations,
// the volume by name or id (a deleted one's by id), with --server and --status too; a
// name of no volume is exit 3 saying so, before any list.
func TestOperationListByVolume(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	acct := env.NewAccount("en", "100", "")
	c := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.Token)
	srv, _ := serverInFsn1(t, c)
	data := jsonString(field(t, c.ok("volume", "create", "--name", "data", "--size", "10", "--location", "fsn1", "-o", "json"), "id"))
	c.ok("volume", "attach", "data", "--server", srv)
	old := jsonString(field(t, c.ok("volume", "create", "--name", "old", "--size", "10", "--location", "fsn1", "-o", "json"), "id"))
	c.ok("volume", "delete", "old")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--volume", "data"}, "attach_volume " + data + "\ncreate_volume " + data + "\n"},
		{[]string{"--volume", data, "--status", "success"}, "attach_volume " + data + "\ncreate_volume " + data + "\n"},
		{[]string{"--volume", "data", "--server", srv}, "attach_volume " + data + "\n"},
		{[]string{"--volume", "data", "--status", "running"}, ""},
		{[]string{"--volume", "data", "--limit", "1"}, "attach_volume " + data + "\n"},
		{[]string{"--volume", old}, "create_volume " + old + "\n"},
		{[]string{"--server", srv}, "attach_volume " + data + "\nprovision \n"},
	} {
		args := append([]string{"operation", "list", "-o", "columns=type,volume_id"}, tt.args...)
		var got strings.Builder
		for _, row := range tableRows(c.ok(args...)) {
			got.WriteString(strings.Join(row, " ") + "\n")
		}
		if want := strings.ReplaceAll(tt.want, " \n", " -\n"); got.String() != want {
			t.Errorf("berth %q:\n%s\nwant:\n%s", args, got.String(), want)
		}
	}
	for _, tt := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"--volume", "old"}, 3, `no volume "old" (berth volume list)`},
		{[]string{"--volume", "data", "--server", "nope"}, 3, `no server "nope" (berth server list)`},
		{[]string{"--volume", "data", "--status", "done"}, 4, "  status: "},
		{[]string{"--volume", "-1"}, 3, `no volume "-1"`},
	} {
		r := c.run(append([]string{"operation", "list"}, tt.args...)...)
		if r.code != tt.code || r.stdout != "" || !strings.Contains(r.stderr, tt.stderr) {
			t.Errorf("berth operation list %q: exit %d, want %d\n%s[stderr]\n%s", tt.args, r.code, tt.code, r.stdout, r.stderr)
		}
	}
}

// TestVolumeCompletion: every volume argument and --volume complete with the
// account's volume names (described by size and status), --server with its server
// names; a command taking one volume completes only its first argument.
func TestVolumeCompletion(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	acct := env.NewAccount("en", "100", "")
	c := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.Token)
	srv, _ := serverInFsn1(t, c)
	c.ok("volume", "create", "--name", "data", "--size", "10", "--server", srv)
	c.ok("volume", "create", "--name", "logs", "--size", "20", "--location", "fsn1")
	for _, tt := range []struct {
		args      []string
		want, not []string
	}{
		{[]string{"volume", "describe", ""}, []string{"data\t10 GB available\n", "logs\t20 GB available\n"}, nil},
		{[]string{"volume", "describe", "lo"}, []string{"logs\t"}, []string{"data\t"}},
		{[]string{"volume", "update", ""}, []string{"data\t", "logs\t"}, nil},
		{[]string{"volume", "attach", ""}, []string{"logs\t"}, []string{srv}},
		{[]string{"volume", "detach", "d"}, []string{"data\t"}, []string{"logs\t"}},
		{[]string{"volume", "resize", ""}, []string{"data\t", "logs\t"}, nil},
		{[]string{"volume", "delete", "logs", ""}, []string{"data\t", "logs\t"}, nil}, // delete takes many
		{[]string{"volume", "attach", "logs", ""}, nil, []string{"data\t", "logs\t", srv}},
		{[]string{"operation", "list", "--volume", ""}, []string{"data\t", "logs\t"}, []string{srv}},
		{[]string{"volume", "attach", "logs", "--server", ""}, []string{srv + "\t"}, []string{"data\t"}},
		{[]string{"volume", "create", "--name", "x", "--server", ""}, []string{srv + "\t"}, nil},
		{[]string{"volume", "list", "--server", ""}, []string{srv + "\t"}, nil},
		{[]string{"operation", "list", "--server", ""}, []string{srv + "\t"}, []string{"data\t"}},
		{[]string{"server", "describe", ""}, []string{srv + "\t"}, []string{"data\t"}},
	} {
		got := c.ok(append([]string{"__complete"}, tt.args...)...)
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("berth __complete %q: %q lacks %q", tt.args, got, w)
			}
		}
		for _, n := range tt.not {
			if strings.Contains(got, n) {
				t.Errorf("berth __complete %q: %q offers %q", tt.args, got, n)
			}
		}
	}
}
