package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/berthhq/berth/internal/testenv"
)

// TestExamples: every command that does something (not a group, not cobra's
// completion) has an Example, and each line of each Example is a command line berth
// accepts: the command exists, takes those flags with those values (--output's too)
// and that many arguments, with its required flags and none of a mutually exclusive
// pair together; at least one line of each is the command itself. Every entry of
// examples names a command.
func TestExamples(t *testing.T) {
	t.Parallel()
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		for _, c := range cmd.Commands() {
			walk(c)
		}
		path := strings.TrimPrefix(cmd.CommandPath(), "berth")
		path = strings.TrimSpace(path)
		if path == "" || cmd.HasSubCommands() || cmd.Hidden || path == "help" || strings.HasPrefix(path, "completion") {
			return
		}
		if cmd.Example == "" {
			t.Errorf("berth %s has no example", path)
			return
		}
		own := false
		for line := range strings.SplitSeq(cmd.Example, "\n") {
			args, _, err := commandLine(line)
			if err != nil {
				t.Errorf("berth %s: example %q: %v", path, line, err)
				continue
			}
			got, err := checkExample(args)
			if err != nil {
				t.Errorf("berth %s: example %q: %v", path, line, err)
			}
			own = own || got == path
		}
		if !own {
			t.Errorf("berth %s: no example runs it:\n%s", path, cmd.Example)
		}
	}
	walk(rootCmd(&globals{}))
	for path := range examples {
		c, _, err := rootCmd(&globals{}).Find(strings.Fields(path))
		if err != nil || strings.TrimPrefix(c.CommandPath(), "berth ") != path {
			t.Errorf("examples[%q]: no such command (%v)", path, err)
		}
	}
}

// checkExample parses args (berth's, after "berth") as berth would, on a root of its
// own, and returns the path of the command they name.
func checkExample(args []string) (string, error) {
	g := &globals{}
	root := rootCmd(g)
	c, rest, err := root.Find(args)
	if err != nil {
		return "", err
	}
	path := strings.TrimPrefix(c.CommandPath(), "berth ")
	if c.HasSubCommands() {
		return path, fmt.Errorf("%q names the group %s, not a command", args, path)
	}
	if err := c.ParseFlags(rest); err != nil {
		return path, err
	}
	for _, check := range []func() error{
		func() error { return c.ValidateArgs(c.Flags().Args()) },
		c.ValidateRequiredFlags,
		c.ValidateFlagGroups,
		func() error { return root.PersistentPreRunE(c, c.Flags().Args()) },
	} {
		if err := check(); err != nil {
			return path, err
		}
	}
	return path, nil
}

// redirects are the files a command line's stdin is redirected from ("< FILE") and
// its stdout to ("> FILE"); "" none.
type redirects struct{ stdin, stdout string }

// commandLine is the arguments of the berth command in a line of shell, and its
// redirections: words split as sh splits them (single and double quotes,
// backslashes), the berth of a pipeline, without a comment. It is an error when no
// berth is run.
func commandLine(line string) (args []string, files redirects, err error) {
	var words [][]string // the pipeline's commands
	var cur []string
	var w strings.Builder
	inWord := false
	var redirect *string // where the next word goes, if it is a redirection's file
	end := func() {
		if inWord {
			if redirect != nil {
				*redirect = w.String()
			} else {
				cur = append(cur, w.String())
			}
			redirect = nil
		}
		w.Reset()
		inWord = false
	}
	s := strings.TrimSpace(line)
loop:
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case ch == ' ' || ch == '\t':
			end()
		case ch == '#' && !inWord:
			break loop
		case ch == '|':
			end()
			words, cur = append(words, cur), nil
		case ch == '<':
			end()
			redirect = &files.stdin
		case ch == '>':
			end()
			redirect = &files.stdout
		case ch == '\'' || ch == '"':
			j := strings.IndexByte(s[i+1:], ch)
			if j < 0 {
				return nil, files, fmt.Errorf("unclosed %c", ch)
			}
			w.WriteString(s[i+1 : i+1+j])
			i, inWord = i+1+j, true
		case ch == '\\' && i+1 < len(s):
			w.WriteByte(s[i+1])
			i, inWord = i+1, true
		default:
			w.WriteByte(ch)
			inWord = true
		}
	}
	end()
	words = append(words, cur)
	for _, cmd := range words {
		if len(cmd) > 0 && cmd[0] == "berth" {
			return slices.Clone(cmd[1:]), files, nil
		}
	}
	return nil, files, fmt.Errorf("runs no berth")
}

// exampleRuns is the order TestExamplesRun runs the examples in, each command's
// lines in turn: one account's story, from the catalog to deleting what it made.
var exampleRuns = []string{
	"me", "location list", "plan list", "image list", "app list", "license list",
	"ssh-key create", "ssh-key list", "ssh-key describe",
	"project create", "project list", "project describe",
	"recipe create", "recipe list", "recipe describe", "recipe update",
	"server create", "server list", "server describe", "server metrics", "server rescale-options",
	"server poweroff", "server poweron", "server reboot", "server reset", "server rescale", "server shutdown", "server reinstall",
	"server rdns list", "server rdns set", "server rdns reset", "server license add", "server license list", "server license remove",
	"snapshot create", "snapshot list", "snapshot describe", "snapshot restore", "snapshot delete",
	"volume create", "volume list", "volume describe", "volume attach", "volume detach", "volume resize", "volume update",
	"volume delete",
	"operation list", "operation describe", "operation wait", "event list", "billing show", "billing transactions",
	"ticket create", "ticket list", "ticket describe", "ticket reply", "attachment download", "ticket close",
	"webhook create", "webhook list", "webhook describe", "webhook update", "webhook test", "webhook deliveries",
	"webhook redeliver", "webhook rotate-secret", "webhook delete",
	"domain create", "domain list", "domain describe", "domain update", "rrset set", "rrset list", "rrset delete",
	"domain export", "domain import", "domain delete",
	"server update", "server delete", "project update", "project delete", "recipe delete", "ssh-key delete",
}

// exampleNotRun are the example lines TestExamplesRun leaves out, and why.
var exampleNotRun = map[string]string{
	"berth event list --follow -o json     # one object a line, until Ctrl-C": "runs until interrupted",
	"berth server console web-1     # Ctrl-] detaches":                        "TestServerConsole attaches",
	"berth server ssh web-1":                                                                            "the simulated server's address answers no ssh",
	"berth server ssh web-1 -- -i ~/.ssh/id_ed25519 uptime":                                             "the simulated server's address answers no ssh",
	"berth context create prod --url https://berth.example.com/v1     # asks for the token":             "TestTokenPrompt",
	`printf '%s\n' "$TOKEN" | berth context create ci --url https://berth.example.com/v1 --token-stdin`: "TestConfigPrecedence",
	"berth webhook redeliver 1 1     # webhook 1's delivery 1, once it has ended (webhook deliveries 1)": "hooks.example.com does not answer: " +
		"the delivery is retried for hours; TestWebhookCommands redelivers one that ended",
	"berth context delete prod": "TestConfigPrecedence",
	"berth context list":        "TestConfigPrecedence",
	"berth context use prod":    "TestConfigPrecedence",
}

// TestExamplesRun: the examples are true: run in the order of exampleRuns against a
// real Berth, in a directory holding the files they name (~ is the test's home),
// every line succeeds; every line is run but those of exampleNotRun.
func TestExamplesRun(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	acct := env.NewAccount("en", "100", "")
	c := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.Token)
	home := strings.TrimPrefix(c.env[0], "HOME=")
	dir := t.TempDir()
	for path, content := range map[string]string{
		filepath.Join(home, ".ssh", "id_ed25519.pub"): testenv.PublicKey(t) + " laptop\n",
		filepath.Join(dir, "setup.sh"):                "#!/bin/sh\napt-get update\n",
		filepath.Join(dir, "motd.sh"):                 "#!/bin/sh\necho welcome > /etc/motd\n",
		filepath.Join(dir, "root-password.txt"):       "a-long-Root-passw0rd\n",
		filepath.Join(dir, "example.org.zone"):        "www 300 IN A 192.0.2.20\n@ IN MX 10 mail.example.net.\n",
		filepath.Join(dir, "screenshot.png"):          string(pngBytes(t)),
		filepath.Join(dir, "boot.log"):                "kernel: disk error\n",
		filepath.Join(dir, "message.txt"):             "Please send it again.\n",
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ran := map[string]bool{}
	for _, path := range exampleRuns {
		for line := range strings.SplitSeq(examples[path], "\n") {
			if _, skip := exampleNotRun[line]; skip {
				continue
			}
			ran[line] = true
			runExample(t, c, dir, home, line)
		}
	}
	for path, ex := range examples {
		for line := range strings.SplitSeq(ex, "\n") {
			if _, skip := exampleNotRun[line]; !skip && !ran[line] {
				t.Errorf("berth %s: example %q is not run (exampleRuns)", path, line)
			}
		}
	}
}

// runExample runs one line of an example with c's binary and environment in dir, ~
// as home, its stdin from the file it names and its stdout to the file it names.
func runExample(t *testing.T, c *cli, dir, home, line string) {
	t.Helper()
	args, files, err := commandLine(line)
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	for i, a := range args {
		if rest, ok := strings.CutPrefix(a, "~/"); ok {
			args[i] = filepath.Join(home, rest)
		}
	}
	cmd := exec.Command(c.bin, args...)
	cmd.Env, cmd.Dir = c.env, dir
	if files.stdin != "" {
		f, err := os.Open(filepath.Join(dir, files.stdin))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.Stdin = f
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Errorf("%s: %v\n%s%s", line, err, out.String(), errb.String())
	}
	if files.stdout != "" {
		if err := os.WriteFile(filepath.Join(dir, files.stdout), out.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
