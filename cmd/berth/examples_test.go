package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
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
			args, err := commandLine(line)
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

// commandLine is the arguments of the berth command in a line of shell: words split
// as sh splits them (single and double quotes, backslashes), the berth of a
// pipeline, without a redirection (< FILE) or a comment. It is an error when no berth
// is run.
func commandLine(line string) ([]string, error) {
	var words [][]string // the pipeline's commands
	var cur []string
	var w strings.Builder
	inWord, redirect := false, false
	end := func() {
		if inWord {
			if !redirect {
				cur = append(cur, w.String())
			}
			redirect = false
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
			redirect = true
		case ch == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unclosed '")
			}
			w.WriteString(s[i+1 : i+1+j])
			i, inWord = i+1+j, true
		case ch == '"':
			j := strings.IndexByte(s[i+1:], '"')
			if j < 0 {
				return nil, fmt.Errorf(`unclosed "`)
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
			return slices.Clone(cmd[1:]), nil
		}
	}
	return nil, fmt.Errorf("runs no berth")
}
