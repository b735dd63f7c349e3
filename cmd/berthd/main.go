// Command berthd is Berth's daemon: it serves the hosting API (serve), migrates its
// database (migrate) and carries out the operator's commands (admin ...). Every
// command but serve prints one JSON object on stdout.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/berthhq/berth/internal/app"
	"github.com/berthhq/berth/internal/store/sqlstore"
)

type globals struct {
	data     string
	database string
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
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	defaultData := os.Getenv("BERTH_DATA")
	if defaultData == "" {
		defaultData = "data"
	}
	cmd.PersistentFlags().StringVar(&g.data, "data", defaultData, "data directory of the embedded SQLite database ($BERTH_DATA)")
	defaultDatabase := os.Getenv("BERTH_DATABASE")
	if defaultDatabase == "" {
		defaultDatabase = os.Getenv("BERTH_DATABASE_URL")
	}
	cmd.PersistentFlags().StringVar(&g.database, "database", defaultDatabase,
		"PostgreSQL database URL, postgres://user:password@host:port/dbname ($BERTH_DATABASE); instead of --data, "+
			"and several serve processes may share it")
	cmd.AddCommand(serveCmd(g), migrateCmd(g), adminCmd(g))
	return cmd
}

// open opens the application on the configured store.
func (g *globals) open(ctx context.Context, cfg app.Config) (*app.App, error) {
	if g.database != "" {
		cfg.DatabaseURL = g.database
		return app.Open(ctx, cfg)
	}
	cfg.DataDir = g.data
	return app.Open(ctx, cfg)
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
