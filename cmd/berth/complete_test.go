package main

import (
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/testenv"
)

// TestGoldenCompletions: the flags that take a location, plan, image, SSH key, app,
// project, recipe or license complete with what the catalog offers and the account has
// (a plan and an image from the command's location, or its server's; rescale's plan
// from the server's rescale options), and so does a LICENSE argument (remove's: the
// server's licenses), through the binary's __complete, as
// testdata/completions.golden holds it; the server's random name is replaced by
// server-XXXXXX.
func TestGoldenCompletions(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	acct := env.NewAccount("en", "100", "")
	c := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.Token)
	c.ok("project", "create", "web")
	c.ok("recipe", "create", "--name", "hello", "--script", "echo hi")
	c.ok("ssh-key", "create", "--name", "laptop", "--public-key", fixedKey)
	c.ok("domain", "create", "example.com")
	name := strings.TrimSpace(c.ok("server", "create", "--plan", "s1-1c-1g", "--location", "hel1", "--image", "ubuntu-24.04",
		"--display-name", "www", "-o", "columns=name"))
	name = strings.TrimSpace(strings.TrimPrefix(name, "name:"))
	c.ok("server", "license", "add", name, "plesk-web-admin")
	var b strings.Builder
	for _, args := range [][]string{
		{"server", "create", "--location", ""},
		{"server", "create", "--location", "h"},
		{"server", "create", "--plan", ""},
		{"server", "create", "--location", "hel1", "--plan", ""},
		{"server", "create", "--location", "ash1", "--plan", "s"},
		{"server", "create", "--location", "fsn1", "--image", ""},
		{"server", "create", "--ssh-key", ""},
		{"server", "create", "--app", ""},
		{"server", "create", "--project", ""},
		{"server", "create", "--recipe", ""},
		{"server", "rescale", name, "--plan", ""},
		{"server", "reinstall", name, "--image", "u"},
		{"server", "list", "--project", ""},
		{"plan", "list", "--location", ""},
		{"image", "list", "--location", "f"},
		{"volume", "create", "--location", ""},
		{"volume", "create", "--server", ""},
		{"domain", "describe", ""},
		{"rrset", "list", "ex"},
		{"server", "rdns", "list", ""},
		{"server", "create", "--license", ""},
		{"server", "license", "add", name, ""},
		{"server", "license", "remove", name, ""},
	} {
		args = append([]string{"__complete"}, args...)
		b.WriteString(strings.ReplaceAll(transcript(args, c.run(args...)), name, "server-XXXXXX"))
	}
	checkGolden(t, "completions", b.String())
}
