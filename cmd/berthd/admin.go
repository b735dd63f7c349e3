package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

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

// openExisting opens the application on the configured store, which an admin
// command never creates (README, "Operate it").
func (g *globals) openExisting(ctx context.Context) (*app.App, error) {
	return g.open(ctx, app.Config{Logger: quietLogger(), Create: app.CreateNever})
}

// withService runs fn on an opened application, closing it afterwards, and prints
// what it returns. Every command but those annotated read-only is written to the
// audit log with its outcome.
func (g *globals) withService(cmd *cobra.Command, fn func(ctx context.Context, s *ops.Service) (any, error)) error {
	return g.withApp(cmd, app.Config{}, fn)
}

// withApp is withService on an application opened with cfg (its Logger and Create
// those of every admin command).
func (g *globals) withApp(cmd *cobra.Command, cfg app.Config, fn func(ctx context.Context, s *ops.Service) (any, error)) error {
	ctx := cmd.Context()
	cfg.Logger, cfg.Create = quietLogger(), app.CreateNever
	cfg.MailFromStore = true // what a command mails (admin ticket reply) is made as serve makes it
	a, err := g.open(ctx, cfg)
	if err != nil {
		return err
	}
	defer a.Close(context.Background())
	out, err := fn(ctx, a.Service)
	err = inEnglish(err)
	if cmd.Annotations["readonly"] != "true" {
		e := operatorAudit(cmd, err)
		if o, ok := out.(auditedAccount); ok && err == nil && e.AccountID == nil {
			id := o.auditAccount()
			e.AccountID = &id
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

func idArg(arg string) (int64, error) {
	id, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || id <= 0 {
		return 0, fail("%q is not an id", arg)
	}
	return id, nil
}

// idCommand describes an admin command of the shape "USE ID" (account block ID,
// token revoke ID, host drain ID): its name, its short help, and what it calls with
// the id on what the command runs on (On: the ops.Service, or the libvirt driver),
// which answers the one object the command prints.
type idCommand[On, Out any] struct {
	use   string // the command's name; its use line is "use ID"
	short string
	run   func(ctx context.Context, on On, id int64) (Out, error)
}

// command is c run by with (withService or withDriver), which opens what c runs
// on and prints its output. The argument is parsed there, once the store is open, so
// that a bad id fails as every other error of the command does (and is audited).
func (c idCommand[On, Out]) command(with func(*cobra.Command, func(context.Context, On) (any, error)) error) *cobra.Command {
	return &cobra.Command{
		Use:   c.use + " ID",
		Short: c.short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return with(cmd, func(ctx context.Context, on On) (any, error) {
				id, err := idArg(args[0])
				if err != nil {
					return nil, err
				}
				return c.run(ctx, on, id)
			})
		},
	}
}

// idFlag adds the required flag --name, an id, to cmd, read into p.
func idFlag(cmd *cobra.Command, p *int64, name, usage string) {
	cmd.Flags().Int64Var(p, name, 0, usage)
	_ = cmd.MarkFlagRequired(name)
}

// moneyFlag parses the value s of the flag --name as an amount.
func moneyFlag(name, s string) (hosting.Money, error) {
	m, err := hosting.ParseMoney(s)
	if err != nil {
		return m, fail("--%s: %v", name, err)
	}
	return m, nil
}

// each is f of every element of xs, in order: never nil, so that an empty list
// prints as [].
func each[X, Y any](xs []X, f func(X) Y) []Y {
	out := make([]Y, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

func adminCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "admin", Short: "Operator commands (work while serve runs)"}
	cmd.AddCommand(accountCmd(g), tokenCmd(g), creditCmd(g), billingCmd(g), serverCmd(g), catalogCmd(g), auditCmd(g), storeCmd(g), dnsCmd(g),
		licenseCmd(g), staffCmd(g), ticketCmd(g))
	cmd.AddCommand(hostCmd(g), imageCmd(g), poolCmd(g), volumePoolCmd(g)) // libvirt driver
	return cmd
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
	var passwordStdin bool
	var createQuotas func() (map[string]int, error)
	create := &cobra.Command{
		Use:   "create --email EMAIL [--password-stdin]",
		Short: "Create an account (its console password read from stdin, or asked for on a terminal)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("password") {
				p, err := readPassword(cmd, passwordStdin)
				if err != nil {
					return err
				}
				n.Password = p
			}
			return g.withService(cmd, func(ctx context.Context, s *ops.Service) (any, error) {
				q, err := createQuotas()
				if err != nil {
					return nil, err
				}
				n.Quotas = q
				if credit != "" {
					if n.Credit, err = moneyFlag("credit", credit); err != nil {
						return nil, err
					}
				}
				a, err := s.CreateAccount(ctx, n)
				return accountOf(a), err
			})
		},
	}
	create.Flags().StringVar(&n.Email, "email", "", "email address (required)")
	create.Flags().StringVar(&n.Password, "password", "", "console password, 8 to 72 characters; less safe than --password-stdin "+
		"or the prompt: other users see it in ps, the shell keeps it in its history")
	create.Flags().BoolVar(&passwordStdin, "password-stdin", false, "read the console password from stdin (its first line)")
	create.MarkFlagsMutuallyExclusive("password", "password-stdin")
	create.Flags().StringVar(&n.Name, "name", "", "display name (default: the email)")
	create.Flags().StringVar(&n.Language, "language", "en", "language of messages: en, de, fr")
	create.Flags().StringVar(&credit, "credit", "", "opening credit, e.g. 25.00 (written as a top-up)")
	createQuotas = quotaFlags(create.Flags())
	_ = create.MarkFlagRequired("email")
	block := func(use string, blocked bool) *cobra.Command {
		return idCommand[*ops.Service, accountOut]{use: use, short: use + " an account",
			run: func(ctx context.Context, s *ops.Service, id int64) (accountOut, error) {
				a, err := s.SetAccountBlocked(ctx, id, blocked)
				return accountOf(a), err
			}}.command(g.withService)
	}
	var updateQuotas func() (map[string]int, error)
	update := idCommand[*ops.Service, accountOut]{use: "update",
		short: "Change an account's quotas (those given; a quota below what it holds takes nothing away)",
		run: func(ctx context.Context, s *ops.Service, id int64) (accountOut, error) {
			q, err := updateQuotas()
			if err != nil {
				return accountOut{}, err
			}
			if len(q) == 0 {
				return accountOut{}, fail("nothing to change: give one of the --quota-... flags")
			}
			a, err := s.SetQuotas(ctx, id, q)
			return accountOf(a), err
		}}.command(g.withService)
	updateQuotas = quotaFlags(update.Flags())
	var after int64
	var limit int
	list := &cobra.Command{
		Use:         "list",
		Short:       "List accounts by id, a page at a time (--after ID: the next page, named by next_after)",
		Args:        cobra.NoArgs,
		Annotations: map[string]string{"readonly": "true"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withService(cmd, func(ctx context.Context, s *ops.Service) (any, error) {
				if limit < 1 || limit > 10000 {
					return nil, fail("--limit must be 1 to 10000")
				}
				if after < 0 {
					return nil, fail("--after must be an account id")
				}
				as, err := s.Accounts(ctx, after, limit)
				if err != nil {
					return nil, err
				}
				page := struct {
					Accounts []accountOut `json:"accounts"`
					// NextAfter, on a full page, is the --after of the next one.
					NextAfter *int64 `json:"next_after,omitempty"`
				}{Accounts: each(as, func(a hosting.Account) accountOut {
					out := accountOf(a)
					out.CreatedAt = &a.CreatedAt
					return out
				})}
				if len(as) == limit {
					page.NextAfter = &as[len(as)-1].ID
				}
				return page, nil
			})
		},
	}
	list.Flags().Int64Var(&after, "after", 0, "only accounts with a larger id (the next page)")
	list.Flags().IntVar(&limit, "limit", 100, "at most this many accounts")
	cmd.AddCommand(list, create, update, block("block", true), block("unblock", false))
	return cmd
}

// maxPasswordLine bounds what --password-stdin reads (a password is 72 bytes at most).
const maxPasswordLine = 4 << 10

// readPassword is the console password of account create when --password is not
// given: the first line of stdin with --password-stdin, else asked for twice on the
// terminal without echo. Without a terminal it is an error naming --password-stdin.
// Either way the password is never on a command line (docs/SECURITY.md).
func readPassword(cmd *cobra.Command, fromStdin bool) (string, error) {
	in := cmd.InOrStdin()
	if fromStdin {
		line, err := bufio.NewReader(io.LimitReader(in, maxPasswordLine)).ReadString('\n')
		if err != nil && err != io.EOF {
			return "", fail("--password-stdin: %v", err)
		}
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if line == "" {
			return "", fail("--password-stdin: stdin holds no password (give it on the first line)")
		}
		return line, nil
	}
	f, ok := in.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return "", fail("no password: give it on stdin with --password-stdin, or run on a terminal to be asked for it")
	}
	ask := func(prompt string) (string, error) {
		fmt.Fprint(cmd.ErrOrStderr(), prompt)
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(cmd.ErrOrStderr())
		return string(b), err
	}
	p, err := ask("Password: ")
	if err != nil {
		return "", err
	}
	again, err := ask("Password again: ")
	if err != nil {
		return "", err
	}
	if p != again {
		return "", fail("the two passwords differ")
	}
	return p, nil
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
				return tokenCreated{AccountID: t.AccountID, ExpiresAt: t.ExpiresAt, ID: t.ID, Name: t.Name, Scopes: t.Scopes,
					Token: secret}, nil
			})
		},
	}
	idFlag(create, &account, "account", "account id (required)")
	create.Flags().StringVar(&name, "name", "", "token name (required)")
	create.Flags().StringVar(&scopes, "scopes", "read", "comma-separated scopes: read,power,servers,snapshots,ssh-keys,recipes,domains,storage,licenses,tickets")
	create.Flags().DurationVar(&expiresIn, "expires-in", 0, "lifetime, e.g. 24h (default: no expiry)")
	_ = create.MarkFlagRequired("name")
	revoke := idCommand[*ops.Service, tokenRevoked]{use: "revoke", short: "Revoke a token at once",
		run: func(ctx context.Context, s *ops.Service, id int64) (tokenRevoked, error) {
			t, err := s.RevokeToken(ctx, id)
			return tokenRevoked{AccountID: t.AccountID, ID: t.ID, Name: t.Name, RevokedAt: t.RevokedAt}, err
		}}.command(g.withService)
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
				return struct {
					Tokens []tokenListed `json:"tokens"`
				}{each(ts, func(t hosting.Token) tokenListed {
					return tokenListed{CreatedAt: t.CreatedAt, ExpiresAt: t.ExpiresAt, ID: t.ID, LastUsedAt: t.LastUsedAt,
						Name: t.Name, RevokedAt: t.RevokedAt, Scopes: t.Scopes}
				})}, nil
			})
		},
	}
	idFlag(list, &of, "account", "account id (required)")
	cmd.AddCommand(list, create, revoke)
	return cmd
}

func creditCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "credit", Short: "Top up accounts and correct their credit"}
	var account int64
	var amount, description string
	add := &cobra.Command{
		Use:   "add",
		Short: "Add credit to an account (a topup transaction)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withService(cmd, func(ctx context.Context, s *ops.Service) (any, error) {
				m, err := moneyFlag("amount", amount)
				if err != nil {
					return nil, err
				}
				t, err := s.AddCredit(ctx, account, m, description)
				if err != nil {
					return nil, err
				}
				return creditAdded{AccountID: t.AccountID, Amount: t.Amount.String(), Credit: t.BalanceAfter.String(),
					Description: t.Description, TransactionID: t.ID}, nil
			})
		},
	}
	idFlag(add, &account, "account", "account id (required)")
	add.Flags().StringVar(&amount, "amount", "", "amount, e.g. 10.00 (required)")
	add.Flags().StringVar(&description, "description", "", "text shown in the transaction history")
	_ = add.MarkFlagRequired("amount")
	var adjAccount int64
	var adjAmount, adjDescription string
	adjust := &cobra.Command{
		Use: "adjust",
		Short: "Correct an account's credit (an adjustment transaction, signed: --amount -90.00 takes 90 off); " +
			"the description says why, in the account's history",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withService(cmd, func(ctx context.Context, s *ops.Service) (any, error) {
				m, err := moneyFlag("amount", adjAmount)
				if err != nil {
					return nil, err
				}
				t, err := s.AdjustCredit(ctx, adjAccount, m, adjDescription)
				if err != nil {
					return nil, err
				}
				return creditAdded{AccountID: t.AccountID, Amount: t.Amount.String(), Credit: t.BalanceAfter.String(),
					Description: t.Description, TransactionID: t.ID}, nil
			})
		},
	}
	idFlag(adjust, &adjAccount, "account", "account id (required)")
	adjust.Flags().StringVar(&adjAmount, "amount", "", "signed amount, e.g. -90.00 or 5.50 (required)")
	adjust.Flags().StringVar(&adjDescription, "description", "", "why, shown in the account's transaction history (required)")
	_ = adjust.MarkFlagRequired("amount")
	_ = adjust.MarkFlagRequired("description")
	cmd.AddCommand(add, adjust)
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
					m, err := moneyFlag("amount", amount)
					if err != nil {
						return nil, err
					}
					b = &m
				case !none:
					return nil, fail("give --amount or --none")
				}
				a, err := s.SetBudget(ctx, account, b)
				if err != nil {
					return nil, err
				}
				out := budgetSet{AccountID: a.ID, Currency: a.Currency}
				if a.Budget != nil {
					shown := a.Budget.String()
					out.Budget = &shown
				}
				return out, nil
			})
		},
	}
	idFlag(budget, &account, "account", "account id (required)")
	budget.Flags().StringVar(&amount, "amount", "", "monthly budget, e.g. 50.00")
	budget.Flags().BoolVar(&none, "none", false, "clear the budget")
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
				return metered{Charged: res.Total.String(), Hours: res.Hours, OverdrawnAccounts: res.Overdrawn,
					TookMS: time.Since(start).Milliseconds()}, nil
			})
		},
	}
	cmd.AddCommand(budget, meter)
	return cmd
}

func serverCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "server", Short: "Suspend and unsuspend servers"}
	suspend := func(use string, on bool) *cobra.Command {
		return idCommand[*ops.Service, serverOut]{use: use, short: use + " a server",
			run: func(ctx context.Context, s *ops.Service, id int64) (serverOut, error) {
				srv, err := s.SetServerSuspended(ctx, id, on)
				return serverOut{AccountID: srv.AccountID, ID: srv.ID, Name: srv.Name, Status: srv.ShownStatus(),
					Suspended: srv.Suspended, SuspendedByOperator: srv.SuspendedByOperator,
					SuspendedForCredit: srv.SuspendedForCredit}, err
			}}.command(g.withService)
	}
	cmd.AddCommand(suspend("suspend", true), suspend("unsuspend", false))
	return cmd
}

func catalogCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "catalog", Short: "Manage what is sold"}
	apply := &cobra.Command{
		Use:   "apply FILE.yaml",
		Short: "Replace the catalog (locations, plans, images, apps, licenses); servers keep theirs",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withService(cmd, func(ctx context.Context, s *ops.Service) (any, error) {
				c, err := catalog.ParseFile(args[0])
				if err != nil {
					return nil, err
				}
				if err := s.ApplyCatalog(ctx, c); err != nil {
					return nil, err
				}
				return catalogApplied{Applied: args[0], Apps: len(c.Apps), Images: len(c.Images), Licenses: len(c.Licenses),
					Locations: len(c.Locations), Plans: len(c.Plans)}, nil
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
				return struct {
					Entries []auditEntry `json:"entries"`
				}{each(list, func(e hosting.AuditEntry) auditEntry {
					return auditEntry{AccountID: e.AccountID, Action: e.Action, Actor: e.Actor, At: e.At.Format(time.RFC3339Nano),
						Client: e.Client, Code: e.Code, ID: e.ID, IdempotencyKey: e.IdempotencyKey, Replayed: e.Replayed,
						Status: e.Status, Target: e.Target, TokenID: e.TokenID}
				})}, nil
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
			return printJSON(storeCopied{Copied: res.Rows, From: g.data, Jobs: res.Jobs, To: sqlstore.Redact(to)})
		},
	}
	copyCmd.Flags().StringVar(&to, "to", "", "the PostgreSQL database to copy to (postgres://user:password@host:port/dbname), empty")
	cmd.AddCommand(copyCmd)
	return cmd
}

// licenseCmd is the operator's side of licenses (docs/api.md, Licenses): the key
// pools of the products provisioned from one.
func licenseCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "license", Short: "Manage the licenses sold with servers"}
	keys := &cobra.Command{Use: "keys", Short: "The key pools of licenses provisioned from one"}
	var license int64
	var file string
	add := &cobra.Command{
		Use:   "add",
		Short: "Add activation keys (one a line of --file, - for stdin) to a license's pool, sealed with the license key",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withService(cmd, func(ctx context.Context, s *ops.Service) (any, error) {
				var data []byte
				var err error
				if file == "-" {
					data, err = io.ReadAll(io.LimitReader(cmd.InOrStdin(), 64<<20))
				} else {
					data, err = os.ReadFile(file)
				}
				if err != nil {
					return nil, err
				}
				n, err := s.AddLicenseKeys(ctx, license, strings.Split(string(data), "\n"))
				if err != nil {
					return nil, err
				}
				c, err := s.LicenseKeys(ctx, license)
				return licenseKeysOut{License: license, Name: c.License.Name, Added: &n, Keys: c.Total, Free: c.Free}, err
			})
		},
	}
	idFlag(add, &license, "license", "license product id (required)")
	add.Flags().StringVar(&file, "file", "-", "file of keys, one a line (- for stdin)")
	list := &cobra.Command{
		Use:         "list",
		Short:       "Count the keys of a license's pool, and those free (the keys are not printed)",
		Args:        cobra.NoArgs,
		Annotations: map[string]string{"readonly": "true"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withService(cmd, func(ctx context.Context, s *ops.Service) (any, error) {
				c, err := s.LicenseKeys(ctx, license)
				return licenseKeysOut{License: license, Name: c.License.Name, Keys: c.Total, Free: c.Free}, err
			})
		},
	}
	idFlag(list, &license, "license", "license product id (required)")
	keys.AddCommand(add, list)
	var month string
	report := &cobra.Command{
		Use:         "report",
		Short:       "Print the licenses held in a calendar month as CSV (license,server,account,from,to,max_vcpus), for a vendor's monthly report",
		Args:        cobra.NoArgs,
		Annotations: map[string]string{"readonly": "true"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := time.Parse("2006-01", month)
			if err != nil {
				return fail("--month %q: want YYYY-MM", month)
			}
			a, err := g.openExisting(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close(context.Background())
			rows, err := a.Service.LicenseReport(cmd.Context(), m)
			if err != nil {
				return err
			}
			w := csv.NewWriter(os.Stdout)
			_ = w.Write([]string{"license", "server", "account", "from", "to", "max_vcpus"})
			for _, r := range rows {
				_ = w.Write([]string{r.License, r.Server, r.Account, r.From.Format(time.RFC3339), r.To.Format(time.RFC3339),
					strconv.Itoa(r.MaxVCPUs)})
			}
			w.Flush()
			return w.Error()
		},
	}
	report.Flags().StringVar(&month, "month", "", "the calendar month, YYYY-MM (UTC) (required)")
	_ = report.MarkFlagRequired("month")
	cmd.AddCommand(keys, report)
	return cmd
}
