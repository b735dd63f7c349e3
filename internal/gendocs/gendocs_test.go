package gendocs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestWrite: a program with a subcommand group gets one man page per command, each
// naming its flags and without cobra's dated footer, and a completion script per
// shell under the name the shell looks for.
func TestWrite(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1800000000") // 2027-01-15
	root := &cobra.Command{Use: "prog", Short: "A program"}
	root.PersistentFlags().String("data", "data", "data directory")
	group := &cobra.Command{Use: "thing", Short: "Things"}
	create := &cobra.Command{Use: "create NAME", Short: "Create a thing", RunE: func(*cobra.Command, []string) error { return nil }}
	create.Flags().Int("size", 1, "size of the thing")
	group.AddCommand(create)
	root.AddCommand(group)

	dir := t.TempDir()
	if err := Write(root, dir); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string][]string{
		"man/prog.1":              {`.TH "PROG" "1" "Jan 2027" "Berth `, "A program", `--data`},
		"man/prog-thing.1":        {"Things"},
		"man/prog-thing-create.1": {"Create a thing", `--size`, `--data`},
		"completions/prog.bash":   {"__start_prog"},
		"completions/_prog":       {"#compdef prog"},
		"completions/prog.fish":   {"complete -c prog"},
	} {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		for _, w := range want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s lacks %q", file, w)
			}
		}
		if strings.Contains(string(b), "Auto generated") {
			t.Errorf("%s has cobra's dated footer", file)
		}
	}
}
