// Command berth is the command-line client of Berth's /v1 API. It calls the API only
// through the Go SDK (package client): it has no HTTP of its own.
//
// Exit codes: 0 success, 1 usage or any other error, 3 not found, 4 validation (the
// fields are listed on stderr), 5 busy, 6 unauthenticated or forbidden, 7 the awaited
// operation ended in error, 8 rate limited or unavailable after the retries.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/berthhq/berth/client"
	"github.com/berthhq/berth/internal/version"
)

// Exit codes a script can branch on.
const (
	exitOK          = 0
	exitError       = 1
	exitNotFound    = 3
	exitValidation  = 4
	exitBusy        = 5
	exitAuth        = 6
	exitOpFailed    = 7
	exitUnavailable = 8
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes one command line and returns its exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	g := &globals{stdin: stdin, stdout: stdout, stderr: stderr}
	cmd := rootCmd(g)
	cmd.SetArgs(args)
	cmd.SetIn(stdin)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	err := cmd.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	printError(stderr, err)
	return exitCode(err)
}

// exitCode maps the SDK's errors onto the exit codes.
func exitCode(err error) int {
	switch {
	case errors.Is(err, client.ErrOperationFailed):
		return exitOpFailed
	case errors.Is(err, client.ErrNotFound), errors.Is(err, errNameNotFound):
		return exitNotFound
	case errors.Is(err, client.ErrValidation):
		return exitValidation
	case errors.Is(err, client.ErrBusy):
		return exitBusy
	case errors.Is(err, client.ErrUnauthenticated), errors.Is(err, client.ErrForbidden):
		return exitAuth
	case errors.Is(err, client.ErrRateLimited), errors.Is(err, client.ErrUnavailable):
		return exitUnavailable
	}
	return exitError
}

// printError writes err on stderr: an API error as the API sent it (its message is in
// the account's language), with each rejected field of a 422 on a line of its own.
// What came from the network is escaped (escape): a message cannot act on the
// terminal, nor add lines of its own.
func printError(w io.Writer, err error) {
	var e *client.Error
	if !errors.As(err, &e) || e.Message == "" {
		fmt.Fprintln(w, "berth:", escapeText(strings.TrimPrefix(err.Error(), "berth: ")))
		if errors.Is(err, client.ErrTimeout) {
			fmt.Fprintln(w, "  --timeout, BERTH_TIMEOUT or the context's timeout set how long berth waits for each answer")
		}
		return
	}
	fmt.Fprintf(w, "berth: %s (%d %s)\n", escape(e.Message), e.StatusCode, escape(e.Code))
	for _, f := range fieldOrder(e.FieldNames()) {
		for _, m := range e.Fields[f] {
			fmt.Fprintf(w, "  %s: %s\n", escape(f), escape(m))
		}
	}
	if e.Operation != nil {
		fmt.Fprintf(w, "  operation %d (%s) is running: berth operation wait %d\n", e.Operation.ID, escape(e.Operation.Type), e.Operation.ID)
	}
}

// fieldOrder sorts a 422's field names with the numbers that end them in numeric
// order, so that a zone file's problems, keyed "line N", are shown in the file's order
// ("line 2" before "line 10"; docs/api.md, Domains) and the rest alphabetically.
func fieldOrder(names []string) []string {
	split := func(s string) (string, int) {
		i := strings.LastIndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }) + 1
		n, err := strconv.Atoi(s[i:])
		if i == len(s) || err != nil {
			return s, -1
		}
		return s[:i], n
	}
	out := slices.Clone(names)
	slices.SortStableFunc(out, func(a, b string) int {
		pa, na := split(a)
		pb, nb := split(b)
		if c := strings.Compare(pa, pb); c != 0 {
			return c
		}
		return cmp.Compare(na, nb)
	})
	return out
}

func rootCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:           "berth",
		Short:         "Command-line client of a Berth hosting API",
		Version:       version.String(), // --version
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	f := cmd.PersistentFlags()
	f.StringVar(&g.url, "url", "", "API base URL, ending in /v1 ($BERTH_URL; default "+client.DefaultBaseURL+")")
	f.StringVar(&g.token, "token", "", "API token ($BERTH_TOKEN)")
	f.StringVar(&g.context, "context", "", "configuration context to use ($BERTH_CONTEXT)")
	f.StringVar(&g.timeout, "timeout", "", "how long to wait for each answer of the API, e.g. 30s or 2m; 0: as long as it takes "+
		"($BERTH_TIMEOUT, or the context's; default "+client.DefaultTimeout.String()+"). A held wait for an operation gets it on top "+
		"of its wait, an open console is not bounded")
	f.StringVarP(&g.output, "output", "o", "table", "output format: table, wide, json, yaml or columns=a,b,...")
	f.BoolVarP(&g.quiet, "quiet", "q", false, "print only ids, and no progress or notes on stderr (errors still)")
	f.BoolVar(&g.noWait, "no-wait", false, "return as soon as an operation has started, without waiting for its end")
	f.IntVar(&g.retries, "retries", client.DefaultRetryPolicy.MaxRetries,
		"how many times a call answered 429 or 503 (after its Retry-After) or not answered at all is sent again; 0 never")
	cmd.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		if err := emptyArg(cmd, args); err != nil {
			return err
		}
		if g.retries < 0 {
			return fmt.Errorf("--retries %d: want 0 or more", g.retries)
		}
		if g.timeout != "" {
			if _, err := parseTimeout(g.timeout); err != nil {
				return fmt.Errorf("--timeout: %w", err)
			}
		}
		_, err := parseOutput(g.output)
		return err
	}
	cmd.AddCommand(contextCmd(g), meCmd(g), locations.command(g), plans.command(g), images.command(g), apps.command(g), licenses.command(g),
		serverCmd(g), snapshotCmd(g), sshKeyCmd(g), projectCmd(g), recipeCmd(g), billingCmd(g), operationCmd(g), eventCmd(g),
		webhookCmd(g), volumeCmd(g), domainCmd(g), rrsetCmd(g), ticketCmd(g), attachmentCmd(g))
	completeNames(cmd, g)
	addExamples(cmd)
	cmd.InitDefaultCompletionCmd()
	strictGroups(cmd)
	return cmd
}

// emptyArg refuses an empty argument where the use line names what it is
// (SERVER, DOMAIN NAME TYPE, ...), up to the first optional, alternative or repeated
// one: "" names nothing, and the API would be asked for a path with an empty
// segment (an unset shell variable, berth server describe "$NAME").
func emptyArg(cmd *cobra.Command, args []string) error {
	words := strings.Fields(cmd.Use)
	for i, w := range words[min(1, len(words)):] {
		if i >= len(args) || strings.ContainsAny(w, "[]|.-=") || strings.ToUpper(w) != w {
			return nil
		}
		if strings.TrimSpace(args[i]) == "" {
			return fmt.Errorf("%s is empty: give one (%s)", w, cmd.UseLine())
		}
	}
	return nil
}

// strictGroups makes a command that only groups subcommands fail on a word it does not
// know (exit 1) instead of printing its help and exiting 0.
func strictGroups(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		strictGroups(c)
	}
	if !cmd.HasSubCommands() || cmd.Runnable() {
		return
	}
	cmd.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		return fmt.Errorf("unknown command %q for %q", args[0], cmd.CommandPath())
	}
	cmd.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
}
