// Command berthd is Berth's daemon: it serves the hosting API (serve), migrates its
// database (migrate) and carries out the operator's commands (admin ...). Every
// command but serve prints one JSON object on stdout.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/berthhq/berth/internal/app"
	"github.com/berthhq/berth/internal/store/sqlstore"
	"github.com/berthhq/berth/internal/version"
)

type globals struct {
	data     string
	database string
	// databaseEnv names the environment variable --database's default came from
	// (BERTH_DATABASE, or BERTH_DATABASE_URL); "" when neither is set.
	databaseEnv string
	// licenseKeyFile is --license-key-file.
	licenseKeyFile string
}

func main() {
	if err := root().Execute(); err != nil {
		// Scripts read stdout: a failure is one JSON object there too.
		_ = printJSON(map[string]string{"error": err.Error()})
		fmt.Fprintln(os.Stderr, "berthd:", err)
		os.Exit(1)
	}
}

func root() *cobra.Command {
	g := &globals{}
	cmd := &cobra.Command{
		Use:           "berthd",
		Short:         "Berth: a control plane for selling virtual servers",
		Version:       version.String(), // --version
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	defaultData := os.Getenv("BERTH_DATA")
	if defaultData == "" {
		defaultData = "data"
	}
	cmd.PersistentFlags().StringVar(&g.data, "data", defaultData, "data directory of the embedded SQLite database ($BERTH_DATA)")
	defaultDatabase := ""
	for _, v := range []string{"BERTH_DATABASE", "BERTH_DATABASE_URL"} {
		if defaultDatabase = os.Getenv(v); defaultDatabase != "" {
			g.databaseEnv = v
			break
		}
	}
	cmd.PersistentFlags().StringVar(&g.database, "database", defaultDatabase,
		"PostgreSQL database URL, postgres://user:password@host:port/dbname ($BERTH_DATABASE); instead of --data, "+
			"and several serve processes may share it")
	// Every command's --help prints the flag's default, which is BERTH_DATABASE's
	// URL: without its password (docs/SECURITY.md). DefValue is only what the help
	// shows; the value itself stays the URL.
	cmd.PersistentFlags().Lookup("database").DefValue = redactDefault(defaultDatabase)
	cmd.PersistentFlags().StringVar(&g.licenseKeyFile, "license-key-file", os.Getenv("BERTH_LICENSE_KEY_FILE"),
		"file of the key (64 hex digits) that seals the license key pools' keys ($BERTH_LICENSE_KEY_FILE; default: "+
			"the data directory's license-key, made when absent; the same file for every process of a PostgreSQL Berth)")
	cmd.AddCommand(serveCmd(g), migrateCmd(g), adminCmd(g))
	cmd.InitDefaultCompletionCmd() // now rather than in Execute, so that strictGroups sees it
	strictGroups(cmd)
	return cmd
}

// strictGroups makes every command under cmd (and cmd) that only groups subcommands
// fail on a word it does not know: `berthd admin acount block 2` is an error, exit 1,
// where cobra would print the group's help and exit 0, and a script would go on as if
// the command had run. A group run bare still prints its help and exits 0, as kubectl
// and git do: asking for the subcommands is not a failure.
func strictGroups(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		strictGroups(c)
	}
	if !cmd.HasSubCommands() || cmd.Runnable() {
		return
	}
	cmd.Args = noSuchSubcommand
	cmd.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
}

// noSuchSubcommand is the Args of a group: any argument is a subcommand it lacks. The
// error is one line (it is printed as JSON), with cobra's suggestions.
func noSuchSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2
	}
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		for i := range s {
			s[i] = strconv.Quote(s[i])
		}
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return errors.New(msg)
}

// open opens the application on the configured store.
func (g *globals) open(ctx context.Context, cfg app.Config) (*app.App, error) {
	cfg.LicenseKeyFile = g.licenseKeyFile
	if g.database != "" {
		cfg.DatabaseURL = g.database
		return app.Open(ctx, cfg)
	}
	cfg.DataDir = g.data
	return app.Open(ctx, cfg)
}

// redactDefault is a database URL as --help shows it for a default: without its
// password, and empty (no "(default ...)") when there is none.
func redactDefault(url string) string {
	if url == "" {
		return ""
	}
	return sqlstore.Redact(url)
}

// databaseOrigin says where --database's value came from, for an error to name: the
// flag, or the environment variable that stands for it.
func (g *globals) databaseOrigin(cmd *cobra.Command) string {
	if g.databaseEnv == "" || cmd.Flags().Changed("database") {
		return "--database"
	}
	return "$" + g.databaseEnv + " (which stands for --database)"
}

// printJSON writes v as one JSON object on stdout.
func printJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	return enc.Encode(v)
}

func migrateCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Create or update the database schema (serve does this too)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := g.open(cmd.Context(), app.Config{Logger: quietLogger(), Create: app.CreateAlways})
			if err != nil {
				return err
			}
			defer a.Close(context.Background())
			if g.database != "" {
				return printJSON(map[string]any{"migrated": true, "database": sqlstore.Redact(g.database)})
			}
			return printJSON(map[string]any{"migrated": true, "data": g.data})
		},
	}
}

func fail(format string, args ...any) error { return fmt.Errorf(format, args...) }
