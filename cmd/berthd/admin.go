package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/berthhq/berth/internal/app"
	"github.com/berthhq/berth/internal/catalog"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/i18n"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store/sqlstore"
)

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// withService runs fn on an opened application, closing it afterwards. Every command
// but those annotated read-only is written to the audit log with its outcome.
func (g *globals) withService(cmd *cobra.Command, fn func(ctx context.Context, s *ops.Service) (any, error)) error {
	ctx := cmd.Context()
	a, err := g.open(ctx, app.Config{Logger: quietLogger(), Create: app.CreateNever})
	if err != nil {
		return err
	}
	defer a.Close(context.Background())
	out, err := fn(ctx, a.Service)
	err = inEnglish(err)
	if cmd.Annotations["readonly"] != "true" {
		e := operatorAudit(cmd, err)
		if m, ok := out.(map[string]any); ok && e.AccountID == nil {
			// The account the command acted on when no --account named it (a token
			// revoked by its id).
			if id, ok := m["account_id"].(int64); ok {
				e.AccountID = &id
			}
		}
		a.Service.Audit(ctx, e)
	}
	if err != nil {
		return err
	}
	return printJSON(out)
}

// inEnglish turns an error the API would answer (a *hosting.Error) into the plain
// English an operator reads in a terminal: "field: message" for each field, or the
// message. Other errors pass through.
func inEnglish(err error) error {
	var he *hosting.Error
	if !errors.As(err, &he) {
		return err
	}
	cat := i18n.MustLoad()
	return errors.New(he.Text(func(m hosting.Msg) string { return cat.T("en", m.ID, m.Args) }))
}

// operatorAudit describes an admin command for the audit log: the command, its
// arguments and flags (never a password), and its exit status.
func operatorAudit(cmd *cobra.Command, err error) hosting.AuditEntry {
	e := hosting.AuditEntry{Actor: "operator", Action: strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" "), Client: "cli"}
	parts := slices.Clone(cmd.Flags().Args())
	cmd.Flags().Visit(func(f *pflag.Flag) {
		switch f.Name {
		case "password", "data", "database":
			return
		case "account":
			if id, err := strconv.ParseInt(f.Value.String(), 10, 64); err == nil {
				e.AccountID = &id
			}
		}
		parts = append(parts, f.Name+"="+f.Value.String())
	})
	e.Target = strings.Join(parts, " ")
	if err != nil {
		e.Status, e.Code = 1, "error: "+err.Error()
	}
	return e
}

func idArg(args []string) (int64, error) {
	id, err := strconv.ParseInt(args[0], 10, 64)
	if err != nil || id <= 0 {
		return 0, fail("%q is not an id", args[0])
	}
	return id, nil
}

func adminCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "admin", Short: "Operator commands (work while serve runs)"}
	cmd.AddCommand(accountCmd(g), tokenCmd(g), creditCmd(g), billingCmd(g), serverCmd(g), catalogCmd(g), auditCmd(g), storeCmd(g))
	cmd.AddCommand(hostCmd(g), imageCmd(g), poolCmd(g)) // libvirt driver
	return cmd
}

func accountJSON(a hosting.Account) map[string]any {
	return map[string]any{"id": a.ID, "email": a.Email, "name": a.Name, "language": a.Language,
		"currency": a.Currency, "credit": a.Credit.String(), "blocked": a.Blocked, "quotas": quotasJSON(a.Quotas)}
}

func quotasJSON(q hosting.Quotas) map[string]int {
	out := map[string]int{}
	for _, k := range hosting.QuotaKinds {
		out[strings.ReplaceAll(k.Flag, "-", "_")] = *k.Of(&q)
	}
	return out
}

// quotaFlags adds a --quota-KIND flag for each quota kind to fs, with the default
// quota shown; set reads those given on the command line (not the others).
func quotaFlags(fs *pflag.FlagSet) (set func() (map[string]int, error)) {
	vals := map[string]*int{}
	for _, k := range hosting.QuotaKinds {
		vals[k.Flag] = fs.Int("quota-"+k.Flag, *k.Of(&hosting.DefaultQuotas), "how many "+strings.ReplaceAll(k.Flag, "-", " ")+" the account may hold")
	}
	// --server-quota is the older spelling of --quota-servers.
	legacy := fs.Int("server-quota", hosting.DefaultQuotas.Servers, "same as --quota-servers")
	_ = fs.MarkHidden("server-quota")
	return func() (map[string]int, error) {
		out := map[string]int{}
		for flag, v := range vals {
			if fs.Changed("quota-" + flag) {
				out[flag] = *v
			}
		}
		if fs.Changed("server-quota") {
			if fs.Changed("quota-servers") && out["servers"] != *legacy {
				return nil, fail("--server-quota and --quota-servers disagree")
			}
			out["servers"] = *legacy
		}
		return out, nil
	}
}

func accountCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "account", Short: "List, create, update, block and unblock accounts"}
	var n ops.NewAccount
	var credit string
	var createQuotas func() (map[string]int, error)
	create := &cobra.Command{
		Use:   "create",
		Short: "Create an account",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withService(cmd, func(ctx context.Context, s *ops.Service) (any, error) {
				q, err := createQuotas()
				if err != nil {
					return nil, err
				}
				n.Quotas = q
				if credit != "" {
					c, err := hosting.ParseMoney(credit)
					if err != nil {
						return nil, fail("--credit: %v", err)
					}
					n.Credit = c
				}
				a, err := s.CreateAccount(ctx, n)
				return accountJSON(a), err
			})
		},
	}
	create.Flags().StringVar(&n.Email, "email", "", "email address (required)")
	create.Flags().StringVar(&n.Password, "password", "", "console password, 8 to 72 characters (required)")
	create.Flags().StringVar(&n.Name, "name", "", "display name (default: the email)")
	create.Flags().StringVar(&n.Language, "language", "en", "language of messages: en, de, fr")
	create.Flags().StringVar(&credit, "credit", "", "opening credit, e.g. 25.00 (written as a top-up)")
	createQuotas = quotaFlags(create.Flags())
	_ = create.MarkFlagRequired("email")
	_ = create.MarkFlagRequired("password")
	block := func(use string, blocked bool) *cobra.Command {
		return &cobra.Command{
			Use:   use + " ID",
			Short: use + " an account",
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return g.withService(cmd, func(ctx context.Context, s *ops.Service) (any, error) {
					id, err := idArg(args)
					if err != nil {
						return nil, err
					}
					a, err := s.SetAccountBlocked(ctx, id, blocked)
					return accountJSON(a), err
				})
			},
		}
	}
	var updateQuotas func() (map[string]int, error)
	update := &cobra.Command{
		Use:   "update ID",
		Short: "Change an account's quotas (those given; a quota below what it holds takes nothing away)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withService(cmd, func(ctx context.Context, s *ops.Service) (any, error) {
				id, err := idArg(args)
				if err != nil {
					return nil, err
				}
				q, err := updateQuotas()
				if err != nil {
					return nil, err
				}
				if len(q) == 0 {
					return nil, fail("nothing to change: give one of the --quota-... flags")
				}
				a, err := s.SetQuotas(ctx, id, q)
				return accountJSON(a), err
			})
		},
	}
	updateQuotas = quotaFlags(update.Flags())
	list := &cobra.Command{
		Use:         "list",
		Short:       "List every account, by id",
		Args:        cobra.NoArgs,
		Annotations: map[string]string{"readonly": "true"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withService(cmd, func(ctx context.Context, s *ops.Service) (any, error) {
				as, err := s.Accounts(ctx)
				if err != nil {
					return nil, err
				}
				out := make([]map[string]any, len(as))
				for i, a := range as {
					out[i] = accountJSON(a)
					out[i]["created_at"] = a.CreatedAt
				}
				return map[string]any{"accounts": out}, nil
			})
		},
	}
	cmd.AddCommand(list, create, update, block("block", true), block("unblock", false))
	return cmd
}

func tokenCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "token", Short: "List, issue and revoke API tokens"}
	var account int64
	var name, scopes string
	var expiresIn time.Duration
	create := &cobra.Command{
		Use:   "create",
		Short: "Issue a token (shown once; read is always included)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withService(cmd, func(ctx context.Context, s *ops.Service) (any, error) {
				t, secret, err := s.CreateToken(ctx, account, name, scopes, expiresIn)
				if err != nil {
					return nil, err
				}
				return map[string]any{"id": t.ID, "token": secret, "account_id": t.AccountID, "name": t.Name,
					"scopes": t.Scopes, "expires_at": t.ExpiresAt}, nil
			})
		},
	}
	create.Flags().Int64Var(&account, "account", 0, "account id (required)")
	create.Flags().StringVar(&name, "name", "", "token name (required)")
	create.Flags().StringVar(&scopes, "scopes", "read", "comma-separated scopes: read,power,servers,snapshots,ssh-keys,recipes,domains,storage,licenses,tickets")
	create.Flags().DurationVar(&expiresIn, "expires-in", 0, "lifetime, e.g. 24h (default: no expiry)")
	_ = create.MarkFlagRequired("account")
	_ = create.MarkFlagRequired("name")
	revoke := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a token at once",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withService(cmd, func(ctx context.Context, s *ops.Service) (any, error) {
				id, err := idArg(args)
				if err != nil {
					return nil, err
				}
				t, err := s.RevokeToken(ctx, id)
				if err != nil {
					return nil, err
				}
				return map[string]any{"id": t.ID, "account_id": t.AccountID, "name": t.Name, "revoked_at": t.RevokedAt}, nil
			})
		},
	}
	var of int64
	list := &cobra.Command{
		Use:         "list",
		Short:       "List an account's tokens, newest first, the revoked ones too (never their secrets)",
		Args:        cobra.NoArgs,
		Annotations: map[string]string{"readonly": "true"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withService(cmd, func(ctx context.Context, s *ops.Service) (any, error) {
				ts, err := s.Tokens(ctx, of)
				if err != nil {
					return nil, err
				}
				out := make([]map[string]any, len(ts))
				for i, t := range ts {
					out[i] = map[string]any{"id": t.ID, "name": t.Name, "scopes": t.Scopes, "expires_at": t.ExpiresAt,
						"last_used_at": t.LastUsedAt, "created_at": t.CreatedAt, "revoked_at": t.RevokedAt}
				}
				return map[string]any{"tokens": out}, nil
			})
		},
	}
	list.Flags().Int64Var(&of, "account", 0, "account id (required)")
	_ = list.MarkFlagRequired("account")
	cmd.AddCommand(list, create, revoke)
	return cmd
}

func creditCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "credit", Short: "Top up accounts"}
	var account int64
	var amount, description string
	add := &cobra.Command{
		Use:   "add",
		Short: "Add credit to an account (a topup transaction)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withService(cmd, func(ctx context.Context, s *ops.Service) (any, error) {
				m, err := hosting.ParseMoney(amount)
				if err != nil {
					return nil, fail("--amount: %v", err)
				}
				t, err := s.AddCredit(ctx, account, m, description)
				if err != nil {
					return nil, err
				}
				return map[string]any{"transaction_id": t.ID, "account_id": t.AccountID, "amount": t.Amount.String(),
					"credit": t.BalanceAfter.String(), "description": t.Description}, nil
			})
		},
	}
	add.Flags().Int64Var(&account, "account", 0, "account id (required)")
	add.Flags().StringVar(&amount, "amount", "", "amount, e.g. 10.00 (required)")
	add.Flags().StringVar(&description, "description", "", "text shown in the transaction history")
	_ = add.MarkFlagRequired("account")
	_ = add.MarkFlagRequired("amount")
	cmd.AddCommand(add)
	return cmd
}

func billingCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "billing", Short: "Budgets and metering"}
	var account int64
	var amount string
	var none bool
	budget := &cobra.Command{
		Use:   "budget",
		Short: "Set an account's monthly budget (--amount 50.00) or clear it (--none)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withService(cmd, func(ctx context.Context, s *ops.Service) (any, error) {
				var b *hosting.Money
				switch {
				case none && amount != "":
					return nil, fail("give --amount or --none, not both")
				case amount != "":
					m, err := hosting.ParseMoney(amount)
					if err != nil {
						return nil, fail("--amount: %v", err)
					}
					b = &m
				case !none:
					return nil, fail("give --amount or --none")
				}
				a, err := s.SetBudget(ctx, account, b)
				if err != nil {
					return nil, err
				}
				var shown any
				if a.Budget != nil {
					shown = a.Budget.String()
				}
				return map[string]any{"account_id": a.ID, "budget": shown, "currency": a.Currency}, nil
			})
		},
	}
	budget.Flags().Int64Var(&account, "account", 0, "account id (required)")
	budget.Flags().StringVar(&amount, "amount", "", "monthly budget, e.g. 50.00")
	budget.Flags().BoolVar(&none, "none", false, "clear the budget")
	_ = budget.MarkFlagRequired("account")
	meter := &cobra.Command{
		Use:   "meter",
		Short: "Run a metering pass now (berthd serve runs one every minute)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withService(cmd, func(ctx context.Context, s *ops.Service) (any, error) {
				start := time.Now()
				res, err := s.Meter(ctx)
				if err != nil {
					return nil, err
				}
				return map[string]any{"hours": res.Hours, "charged": res.Total.String(), "overdrawn_accounts": res.Overdrawn,
					"took_ms": time.Since(start).Milliseconds()}, nil
			})
		},
	}
	cmd.AddCommand(budget, meter)
	return cmd
}

func serverCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "server", Short: "Suspend and unsuspend servers"}
	suspend := func(use string, on bool) *cobra.Command {
		return &cobra.Command{
			Use:   use + " ID",
			Short: use + " a server",
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return g.withService(cmd, func(ctx context.Context, s *ops.Service) (any, error) {
					id, err := idArg(args)
					if err != nil {
						return nil, err
					}
					srv, err := s.SetServerSuspended(ctx, id, on)
					if err != nil {
						return nil, err
					}
					return map[string]any{"id": srv.ID, "name": srv.Name, "account_id": srv.AccountID,
						"status": srv.ShownStatus(), "suspended": srv.Suspended, "suspended_by_operator": srv.SuspendedByOperator,
						"suspended_for_credit": srv.SuspendedForCredit}, nil
				})
			},
		}
	}
	cmd.AddCommand(suspend("suspend", true), suspend("unsuspend", false))
	return cmd
}

func catalogCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "catalog", Short: "Manage what is sold"}
	apply := &cobra.Command{
		Use:   "apply FILE.yaml",
		Short: "Replace the catalog (locations, plans, images, apps); servers keep theirs",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withService(cmd, func(ctx context.Context, s *ops.Service) (any, error) {
				data, err := os.ReadFile(args[0])
				if err != nil {
					return nil, err
				}
				c, err := catalog.Parse(data)
				if err != nil {
					return nil, err
				}
				if err := s.ApplyCatalog(ctx, c); err != nil {
					return nil, err
				}
				return map[string]any{"applied": args[0], "locations": len(c.Locations), "plans": len(c.Plans),
					"images": len(c.Images), "apps": len(c.Apps)}, nil
			})
		},
	}
	cmd.AddCommand(apply)
	return cmd
}

func auditCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "audit", Short: "Read the audit log"}
	var account, before int64
	var limit int
	list := &cobra.Command{
		Use:         "list",
		Short:       "List audit entries, newest first (--before ID pages back)",
		Args:        cobra.NoArgs,
		Annotations: map[string]string{"readonly": "true"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withService(cmd, func(ctx context.Context, s *ops.Service) (any, error) {
				if limit < 1 || limit > 10000 {
					return nil, fail("--limit must be 1 to 10000")
				}
				list, err := s.AuditLog(ctx, account, before, limit)
				if err != nil {
					return nil, err
				}
				entries := make([]map[string]any, len(list))
				for i, e := range list {
					entries[i] = map[string]any{"id": e.ID, "at": e.At.Format(time.RFC3339Nano), "actor": e.Actor,
						"account_id": e.AccountID, "token_id": e.TokenID, "action": e.Action, "target": e.Target,
						"status": e.Status, "code": e.Code, "client": e.Client, "idempotency_key": e.IdempotencyKey,
						"replayed": e.Replayed}
				}
				return map[string]any{"entries": entries}, nil
			})
		},
	}
	list.Flags().Int64Var(&account, "account", 0, "only this account's entries")
	list.Flags().Int64Var(&before, "before", 0, "only entries with a smaller id (the next page)")
	list.Flags().IntVar(&limit, "limit", 100, "at most this many entries")
	cmd.AddCommand(list)
	return cmd
}

func storeCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "store", Short: "Move an installation between databases"}
	var to string
	copyCmd := &cobra.Command{
		Use:   "copy",
		Short: "Copy the SQLite installation in --data to an empty PostgreSQL database (--to), everything in it",
		Long: "Copies every account, token, catalog item, server, simulated machine, snapshot, operation (with the jobs of " +
			"those in flight), ledger entry, metric sample and audit entry of the SQLite database in --data to the " +
			"PostgreSQL database --to, in one transaction. Stop serve first: the copy refuses a data directory a serve " +
			"holds, and a target that holds anything. Afterwards serve with --database URL; the data directory is left as it was.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if to == "" {
				return fail("--to postgres://... is required")
			}
			if g.database != "" {
				return fail("the source is --data DIR (SQLite); the target is --to, not %s", g.databaseOrigin(cmd))
			}
			res, err := app.CopyStore(cmd.Context(), g.data, to)
			if err != nil {
				return err
			}
			return printJSON(map[string]any{"copied": res.Rows, "jobs": res.Jobs, "from": g.data, "to": sqlstore.Redact(to)})
		},
	}
	copyCmd.Flags().StringVar(&to, "to", "", "the PostgreSQL database to copy to (postgres://user:password@host:port/dbname), empty")
	cmd.AddCommand(copyCmd)
	return cmd
}
