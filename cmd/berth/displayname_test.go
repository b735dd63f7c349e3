package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/testenv"
)

// TestGoldenDisplayNames: a server's display name names it wherever a command takes a
// server (an argument, --server), when exactly one server has it; a display name two
// servers share is refused with both listed; an id or a machine name wins over a
// display name. As testdata/display-names.golden holds it, the servers' random names
// replaced by server-AAAAAA, server-BBBBBB, ... and how long operations took by D.
func TestGoldenDisplayNames(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	acct := env.NewAccount("en", "100", "")
	c := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.Token)
	var names []string
	for _, display := range []string{"web", "db", "db", "spare"} {
		name := strings.TrimSpace(c.ok("server", "create", "--plan", "s1-1c-1g", "--location", "fsn1", "--image", "ubuntu-24.04",
			"--display-name", display, "-o", "columns=name"))
		names = append(names, strings.TrimSpace(strings.TrimPrefix(name, "name:")))
	}
	var b strings.Builder
	for _, args := range [][]string{
		{"server", "describe", "web", "-o", "columns=id,name,display_name"},
		{"server", "poweroff", "web", "-o", "columns=id,status"},
		{"server", "poweron", "web", "-o", "columns=id,status"},
		{"server", "update", "web", "--display-name", "www", "-o", "columns=id,display_name"},
		{"server", "describe", "web"},
		{"snapshot", "create", "www", "--name", "before", "-q"}, // -q: whether it waits for the operation depends on timing
		{"snapshot", "list", "www", "-o", "columns=name,server_id"},
		{"snapshot", "describe", "www", "before", "-o", "columns=name,server_id"},
		{"volume", "create", "--name", "data", "--size", "10", "--server", "www", "-o", "columns=name,server"},
		{"volume", "list", "--server", "www", "-o", "columns=name,server"},
		{"operation", "list", "--server", "www", "-o", "columns=type,server_id"},
		{"server", "describe", "db"},
		{"server", "poweroff", "db"},
		{"volume", "list", "--server", "db"},
		{"server", "delete", "db"},
		{"server", "list", "-o", "columns=id,display_name"},
		{"server", "update", "spare", "--display-name", names[0], "-o", "columns=id,display_name"},
		{"server", "describe", names[0], "-o", "columns=id,name,display_name"},
		{"server", "update", "4", "--display-name", "2", "-o", "columns=id,display_name"},
		{"server", "describe", "2", "-o", "columns=id,display_name"},
		{"server", "describe", "nope"},
		{"server", "delete", "www", "4"},
		{"server", "list", "-o", "columns=id,display_name"},
	} {
		r := c.run(args...)
		out := took.ReplaceAllString(transcript(args, r), "succeeded after D")
		for i, n := range names {
			out = strings.ReplaceAll(out, n, "server-"+strings.Repeat(string(rune('A'+i)), len(n)-len("server-")))
		}
		b.WriteString(out)
	}
	checkGolden(t, "display-names", b.String())
}

var took = regexp.MustCompile(`succeeded after \S+`)
