package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

func mustID(s, what string) (int64, error) {
	if id, ok := asID(s); ok {
		return id, nil
	}
	return 0, fmt.Errorf("%s %q: want a numeric id", what, s)
}

var snapshotView = view[api.Snapshot]{
	id: func(s api.Snapshot) string { return i64(s.ID) },
	columns: []column[api.Snapshot]{
		{name: "id", value: func(s api.Snapshot) string { return i64(s.ID) }},
		{name: "name", value: func(s api.Snapshot) string { return s.Name }},
		{name: "status", value: func(s api.Snapshot) string { return s.Status }},
		{name: "size_gb", value: func(s api.Snapshot) string { return strconv.Itoa(s.SizeGB) }},
		{name: "server_id", wide: true, value: func(s api.Snapshot) string { return i64(s.ServerID) }},
		{name: "include_memory", wide: true, value: func(s api.Snapshot) string { return strconv.FormatBool(s.IncludeMemory) }},
		{name: "created_at", value: func(s api.Snapshot) string { return ts(s.CreatedAt) }},
	},
}

// snapshotOf finds a server's snapshot by id or name.
func snapshotOf(ctx context.Context, c *client.Client, server, s string) (*api.Snapshot, error) {
	snaps, err := c.ListSnapshots(ctx, server)
	if err != nil {
		return nil, err
	}
	for _, sn := range snaps {
		if i64(sn.ID) == s || sn.Name == s {
			return &sn, nil
		}
	}
	return nil, fmt.Errorf("server %s has no snapshot %q (berth snapshot list %s): %w", server, s, server, errNameNotFound)
}

func snapshotCmd(g *globals) *cobra.Command {
	var name string
	var memory bool
	create := &cobra.Command{
		Use: "create SERVER [--name NAME] [--include-memory]", Short: "Snapshot a server", Args: cobra.ExactArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			req := api.SnapshotCreate{}
			if name != "" {
				req.Name = &name
			}
			if memory {
				req.IncludeMemory = &memory
			}
			snap, err := c.CreateSnapshot(ctx, args[0], req)
			if err != nil {
				return err
			}
			if !g.noWait {
				srv, err := c.GetServer(ctx, args[0])
				if err != nil {
					return err
				}
				if srv.Operation != nil {
					if _, err := waitOperation(ctx, g, c, srv.Operation, "server "+srv.Name); err != nil {
						return err
					}
				}
				if snap, err = snapshotOf(ctx, c, args[0], i64(snap.ID)); err != nil {
					return err
				}
			}
			return printOne(g, snapshotView, *snap)
		}),
	}
	create.Flags().StringVar(&name, "name", "", "snapshot name")
	create.Flags().BoolVar(&memory, "include-memory", false, "save the memory of a running server too")
	list := &cobra.Command{
		Use: "list SERVER", Short: "List a server's snapshots", Args: cobra.ExactArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			snaps, err := c.ListSnapshots(ctx, args[0])
			if err != nil {
				return err
			}
			return printList(g, snapshotView, snaps)
		}),
	}
	describe := &cobra.Command{
		Use: "describe SERVER SNAPSHOT", Short: "Show a snapshot (by name or id)", Args: cobra.ExactArgs(2),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			snap, err := snapshotOf(ctx, c, args[0], args[1])
			if err != nil {
				return err
			}
			return printOne(g, snapshotView, *snap)
		}),
	}
	restore := &cobra.Command{
		Use: "restore SERVER SNAPSHOT", Short: "Restore a server from one of its snapshots", Args: cobra.ExactArgs(2),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			snap, err := snapshotOf(ctx, c, args[0], args[1])
			if err != nil {
				return err
			}
			srv, err := c.RestoreSnapshot(ctx, args[0], snap.ID)
			if err != nil {
				return err
			}
			return afterServerAction(ctx, g, c, srv)
		}),
	}
	del := &cobra.Command{
		Use: "delete SERVER SNAPSHOT", Short: "Delete a snapshot (at once, or when the server's operation ends)", Args: cobra.ExactArgs(2),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			snap, err := snapshotOf(ctx, c, args[0], args[1])
			if err != nil {
				return err
			}
			res, err := c.DeleteSnapshot(ctx, args[0], snap.ID)
			if err != nil {
				return err
			}
			g.note("Snapshot %d: %s\n", snap.ID, res.Result)
			return nil
		}),
	}
	return group("snapshot", "Manage a server's snapshots", create, list, describe, restore, del)
}

var sshKeyView = view[api.SSHKey]{
	id: func(k api.SSHKey) string { return i64(k.ID) },
	columns: []column[api.SSHKey]{
		{name: "id", value: func(k api.SSHKey) string { return i64(k.ID) }},
		{name: "name", value: func(k api.SSHKey) string { return k.Name }},
		{name: "fingerprint", value: func(k api.SSHKey) string { return k.Fingerprint }},
		{name: "public_key", wide: true, value: func(k api.SSHKey) string { return k.PublicKey }},
		{name: "created_at", wide: true, value: func(k api.SSHKey) string { return ts(k.CreatedAt) }},
	},
}

func sshKeyCmd(g *globals) *cobra.Command {
	var name, key, keyFile string
	create := &cobra.Command{
		Use: "create --name NAME (--public-key KEY | --public-key-from-file FILE)", Short: "Store a public key", Args: cobra.NoArgs,
		RunE: withClient(g, func(ctx context.Context, c *client.Client, _ []string) error {
			if keyFile != "" {
				b, err := os.ReadFile(keyFile)
				if err != nil {
					return err
				}
				key = strings.TrimSpace(string(b))
			}
			req := api.SSHKeyCreate{}
			if name != "" {
				req.Name = &name
			}
			if key != "" {
				req.PublicKey = &key
			}
			k, err := c.CreateSSHKey(ctx, req)
			if err != nil {
				return err
			}
			return printOne(g, sshKeyView, *k)
		}),
	}
	create.Flags().StringVar(&name, "name", "", "key name")
	create.Flags().StringVar(&key, "public-key", "", "public key (authorized_keys line)")
	create.Flags().StringVar(&keyFile, "public-key-from-file", "", "file holding the public key (e.g. ~/.ssh/id_ed25519.pub)")
	create.MarkFlagsMutuallyExclusive("public-key", "public-key-from-file")
	list := listCmd(g, "List the SSH keys", sshKeyView, (*client.Client).ListSSHKeys)
	describe := describeCmd(g, "describe KEY", "Show an SSH key (by name, fingerprint or id)", "ssh key", sshKeyView, (*client.Client).ListSSHKeys,
		func(k api.SSHKey, s string) bool { return i64(k.ID) == s || k.Name == s || k.Fingerprint == s })
	del := deleteCmd(g, "delete KEY", "Delete an SSH key (servers keep it)", "SSH key", sshKeyID, (*client.Client).DeleteSSHKey)
	return group("ssh-key", "Manage SSH keys", create, list, describe, del)
}

var projectView = view[api.Project]{
	id: func(p api.Project) string { return i64(p.ID) },
	columns: []column[api.Project]{
		{name: "id", value: func(p api.Project) string { return i64(p.ID) }},
		{name: "name", value: func(p api.Project) string { return p.Name }},
		{name: "server_count", value: func(p api.Project) string { return strconv.Itoa(p.ServerCount) }},
		{name: "created_at", wide: true, value: func(p api.Project) string { return ts(p.CreatedAt) }},
	},
}

func projectCmd(g *globals) *cobra.Command {
	create := &cobra.Command{
		Use: "create NAME", Short: "Make a project", Args: cobra.ExactArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			p, err := c.CreateProject(ctx, api.ProjectWrite{Name: &args[0]})
			if err != nil {
				return err
			}
			return printOne(g, projectView, *p)
		}),
	}
	list := listCmd(g, "List the projects", projectView, (*client.Client).ListProjects)
	describe := describeCmd(g, "describe PROJECT", "Show a project (by name or id)", "project", projectView, (*client.Client).ListProjects,
		func(p api.Project, s string) bool { return i64(p.ID) == s || p.Name == s })
	var name string
	update := &cobra.Command{
		Use: "update PROJECT --name NAME", Short: "Rename a project", Args: cobra.ExactArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			id, err := projectID(ctx, c, args[0])
			if err != nil {
				return err
			}
			p, err := c.UpdateProject(ctx, id, api.ProjectWrite{Name: &name})
			if err != nil {
				return err
			}
			return printOne(g, projectView, *p)
		}),
	}
	update.Flags().StringVar(&name, "name", "", "new name")
	_ = update.MarkFlagRequired("name")
	del := deleteCmd(g, "delete PROJECT", "Delete a project (its servers keep running, unassigned)", "Project", projectID, (*client.Client).DeleteProject)
	return group("project", "Manage projects", create, list, describe, update, del)
}

var recipeView = view[api.Recipe]{
	id: func(r api.Recipe) string { return i64(r.ID) },
	columns: []column[api.Recipe]{
		{name: "id", value: func(r api.Recipe) string { return i64(r.ID) }},
		{name: "name", value: func(r api.Recipe) string { return r.Name }},
		{name: "created_at", value: func(r api.Recipe) string { return ts(r.CreatedAt) }},
		{name: "script", wide: true, value: func(r api.Recipe) string { return r.Script }},
	},
}

// recipeFlags are the --name, --script and --script-from-file of create and update.
type recipeFlags struct{ name, script, file string }

func (f *recipeFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.name, "name", "", "recipe name")
	cmd.Flags().StringVar(&f.script, "script", "", "first-boot script")
	cmd.Flags().StringVar(&f.file, "script-from-file", "", "file holding the first-boot script")
	cmd.MarkFlagsMutuallyExclusive("script", "script-from-file")
}

func (f *recipeFlags) request() (api.RecipeWrite, error) {
	var req api.RecipeWrite
	if f.file != "" {
		b, err := os.ReadFile(f.file)
		if err != nil {
			return req, err
		}
		f.script = string(b)
	}
	if f.name != "" {
		req.Name = &f.name
	}
	if f.script != "" {
		req.Script = &f.script
	}
	return req, nil
}

func recipeCmd(g *globals) *cobra.Command {
	var cf, uf recipeFlags
	create := &cobra.Command{
		Use: "create --name NAME (--script SCRIPT | --script-from-file FILE)", Short: "Store a first-boot script", Args: cobra.NoArgs,
		RunE: withClient(g, func(ctx context.Context, c *client.Client, _ []string) error {
			req, err := cf.request()
			if err != nil {
				return err
			}
			r, err := c.CreateRecipe(ctx, req)
			if err != nil {
				return err
			}
			return printOne(g, recipeView, *r)
		}),
	}
	cf.add(create)
	list := listCmd(g, "List the recipes", recipeView, (*client.Client).ListRecipes)
	describe := &cobra.Command{
		Use: "describe RECIPE", Short: "Show a recipe (by name or id)", Args: cobra.ExactArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			id, err := recipeID(ctx, c, args[0])
			if err != nil {
				return err
			}
			r, err := c.GetRecipe(ctx, id)
			if err != nil {
				return err
			}
			return printOne(g, recipeView, *r)
		}),
	}
	update := &cobra.Command{
		Use: "update RECIPE [--name NAME] [--script SCRIPT | --script-from-file FILE]", Short: "Change a recipe", Args: cobra.ExactArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			id, err := recipeID(ctx, c, args[0])
			if err != nil {
				return err
			}
			req, err := uf.request()
			if err != nil {
				return err
			}
			r, err := c.UpdateRecipe(ctx, id, req)
			if err != nil {
				return err
			}
			return printOne(g, recipeView, *r)
		}),
	}
	uf.add(update)
	del := deleteCmd(g, "delete RECIPE", "Delete a recipe", "Recipe", recipeID, (*client.Client).DeleteRecipe)
	return group("recipe", "Manage first-boot recipes", create, list, describe, update, del)
}

var billingView = view[api.Billing]{
	id: func(b api.Billing) string { return b.Credit },
	columns: []column[api.Billing]{
		{name: "credit", value: func(b api.Billing) string { return b.Credit + " " + b.Currency }},
		{name: "hourly_burn", value: func(b api.Billing) string { return b.HourlyBurn }},
		{name: "monthly_burn", value: func(b api.Billing) string { return b.MonthlyBurn }},
		{name: "days_left", value: func(b api.Billing) string { return optI64(b.DaysLeft) }},
		{name: "month_to_date", value: func(b api.Billing) string { return b.MonthToDate }},
		{name: "budget", value: func(b api.Billing) string { return optStr(b.Budget) }},
	},
}

var transactionView = view[api.Transaction]{
	id: func(t api.Transaction) string { return i64(t.ID) },
	columns: []column[api.Transaction]{
		{name: "id", value: func(t api.Transaction) string { return i64(t.ID) }},
		{name: "type", value: func(t api.Transaction) string { return t.Type }},
		{name: "amount", value: func(t api.Transaction) string { return t.Amount }},
		{name: "balance_after", value: func(t api.Transaction) string { return t.BalanceAfter }},
		{name: "description", value: func(t api.Transaction) string { return t.Description }},
		{name: "resource", wide: true, value: func(t api.Transaction) string {
			if t.Resource == nil {
				return ""
			}
			return fmt.Sprintf("%s %d (%s)", t.Resource.Type, t.Resource.ID, t.Resource.Name)
		}},
		{name: "created_at", value: func(t api.Transaction) string { return ts(t.CreatedAt) }},
	},
}

func billingCmd(g *globals) *cobra.Command {
	show := &cobra.Command{
		Use: "show", Short: "Show the credit, burn rate and month-to-date spend", Args: cobra.NoArgs,
		RunE: withClient(g, func(ctx context.Context, c *client.Client, _ []string) error {
			b, err := c.GetBilling(ctx)
			if err != nil {
				return err
			}
			return printOne(g, billingView, *b)
		}),
	}
	var limit int
	transactions := &cobra.Command{
		Use: "transactions [--limit N]", Short: "List the ledger, newest first (every page)", Args: cobra.NoArgs,
		RunE: withClient(g, func(ctx context.Context, c *client.Client, _ []string) error {
			var all []api.Transaction
			for t, err := range c.AllTransactions(ctx) {
				if err != nil {
					return err
				}
				all = append(all, t)
				if limit > 0 && len(all) >= limit {
					break
				}
			}
			return printList(g, transactionView, all)
		}),
	}
	transactions.Flags().IntVar(&limit, "limit", 0, "at most this many entries (0: all)")
	return group("billing", "Credit and ledger", show, transactions)
}

var operationView = view[api.Operation]{
	id: func(o api.Operation) string { return i64(o.ID) },
	columns: []column[api.Operation]{
		{name: "id", value: func(o api.Operation) string { return i64(o.ID) }},
		{name: "type", value: func(o api.Operation) string { return o.Type }},
		{name: "server_id", value: func(o api.Operation) string { return i64(o.ServerID) }},
		{name: "status", value: func(o api.Operation) string { return o.Status }},
		{name: "error", value: func(o api.Operation) string { return optStr(o.Error) }},
		{name: "started_at", value: func(o api.Operation) string { return ts(o.StartedAt) }},
		{name: "finished_at", value: func(o api.Operation) string {
			if o.FinishedAt == nil {
				return ""
			}
			return ts(*o.FinishedAt)
		}},
	},
}

func operationCmd(g *globals) *cobra.Command {
	var server, status string
	var limit int
	list := &cobra.Command{
		Use: "list [--server SERVER] [--status STATUS] [--limit N]", Short: "List operations, newest first", Args: cobra.NoArgs,
		RunE: withClient(g, func(ctx context.Context, c *client.Client, _ []string) error {
			opts := client.OperationListOptions{Status: status}
			seq := c.AllOperations(ctx, opts)
			if server != "" {
				seq = c.AllServerOperations(ctx, server, opts)
			}
			var all []api.Operation
			for o, err := range seq {
				if err != nil {
					return err
				}
				all = append(all, o)
				if limit > 0 && len(all) >= limit {
					break
				}
			}
			return printList(g, operationView, all)
		}),
	}
	list.Flags().StringVar(&server, "server", "", "only this server's operations (name or id)")
	list.Flags().StringVar(&status, "status", "", "running, success or error")
	list.Flags().IntVar(&limit, "limit", 50, "at most this many (0: all)")
	describe := &cobra.Command{
		Use: "describe OPERATION", Short: "Show an operation", Args: cobra.ExactArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			id, err := mustID(args[0], "operation")
			if err != nil {
				return err
			}
			op, err := c.GetOperation(ctx, id)
			if err != nil {
				return err
			}
			return printOne(g, operationView, *op)
		}),
	}
	wait := &cobra.Command{
		Use: "wait OPERATION", Short: "Wait for an operation to end (exit 7 if it ends in error)", Args: cobra.ExactArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			id, err := mustID(args[0], "operation")
			if err != nil {
				return err
			}
			op, err := c.GetOperation(ctx, id)
			if err != nil {
				return err
			}
			if op.Status == client.OperationStatusRunning {
				if op, err = waitOperation(ctx, g, c, &api.OperationRef{ID: op.ID, Type: op.Type, StartedAt: op.StartedAt}, "server "+i64(op.ServerID)); err != nil && op == nil {
					return err
				}
			}
			if perr := printOne(g, operationView, *op); perr != nil {
				return perr
			}
			if op.Status == client.OperationStatusError {
				return &client.OperationError{Operation: op}
			}
			return nil
		}),
	}
	return group("operation", "Operations on servers", list, describe, wait)
}
