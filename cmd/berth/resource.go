package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

// A resource describes one kind of the API's resources to the commands every kind
// shares: list, describe, update and delete are built from it (command), and the
// arguments that name one are resolved by id or by name in one place (ref, fetch).
// Each kind's file fills one in with what differs: its columns, its calls of the SDK,
// its flags and its help; its own commands (create, server power, snapshot restore)
// it writes itself. T is the kind's type in package api.
type resource[T any] struct {
	name  string // of the command group: "ssh-key"
	short string // the group's help
	noun  string // what one is called: "SSH key" ("no ssh key ...", "SSH key 5 deleted")
	arg   string // what names one on a command line: "KEY"
	// parent names, before arg, the server a resource belongs to ("SERVER" for a
	// snapshot); "" for the account's own.
	parent string

	view view[T]
	// viewOf, when set, is the view of items in place of view (servers: it names their
	// locations, plans and images, which takes a request).
	viewOf func(ctx context.Context, g *globals, c *client.Client, items []T) view[T]

	// all is every one (of parent); id is one's id; names are what else names one on a
	// command line (nil: its id alone, a number).
	all   func(ctx context.Context, c *client.Client, parent string) ([]T, error)
	id    func(T) int64
	names func(T) []string
	// get asks the API for one by id, where it has such a call. Without it, fetch finds
	// the argument in all.
	get func(ctx context.Context, c *client.Client, id int64) (*T, error)
	// getRef, set where the API takes a name as well as an id (servers): an argument
	// goes to the API as it is, the API resolves it.
	getRef func(ctx context.Context, c *client.Client, ref string) (*T, error)
	// checkIDs looks a number up in all too, rather than send it as an id unchecked
	// (snapshots: a number that is none of the server's is answered here).
	checkIDs bool

	// The commands, each where its help is set. list lists all, or what listFlags
	// returns once it has added list's own flags (listUse shows them in the usage).
	listHelp  string
	listUse   string
	listFlags func(cmd *cobra.Command) func(ctx context.Context, c *client.Client, parent string) ([]T, error)
	// describeHelp is describe's: it shows what its argument names (fetch).
	describeHelp string
	update       *updater[T]
	// deleteHelp is delete's: it deletes what its argument names (ref), with
	// deleteMany (and no parent) each of its arguments. del's result, when it has
	// one, is noted in place of "deleted".
	deleteHelp string
	deleteMany bool
	del        func(ctx context.Context, c *client.Client, parent string, r ref) (result string, err error)
}

// updater is a resource's update command: "update ARG " + use; flags adds its flags to cmd
// and returns what writes the resource r names with them.
type updater[T any] struct {
	use, short string
	flags      func(cmd *cobra.Command) func(ctx context.Context, c *client.Client, r ref) (*T, error)
}

// ref is what an argument resolved to: an id, or for a server the argument as it was
// given (the API reads a name there as well as an id).
type ref struct {
	id  int64
	arg string
}

func (r ref) String() string {
	if r.arg != "" {
		return r.arg
	}
	return i64(r.id)
}

// find is the first of items whose id (in decimal) or one of whose names is s.
func (r *resource[T]) find(items []T, s string) (T, bool) {
	for _, it := range items {
		if i64(r.id(it)) == s || r.names != nil && slices.Contains(r.names(it), s) {
			return it, true
		}
	}
	var none T
	return none, false
}

// notFound is the error of an argument s that names none (of parent): exit 3.
func (r *resource[T]) notFound(parent, s string) error {
	noun := strings.ToLower(r.noun)
	if r.parent != "" {
		return fmt.Errorf("%s %s has no %s %q (berth %s list %s): %w", strings.ToLower(r.parent), parent, noun, s, r.name, parent, errNameNotFound)
	}
	return fmt.Errorf("no %s %q (berth %s list): %w", noun, s, r.name, errNameNotFound)
}

// lookup is the one of all (of parent) that s names.
func (r *resource[T]) lookup(ctx context.Context, c *client.Client, parent, s string) (*T, error) {
	items, err := r.all(ctx, c, parent)
	if err != nil {
		return nil, err
	}
	if it, ok := r.find(items, s); ok {
		if n := r.named(items, s); n > 1 {
			return nil, fmt.Errorf("%q names %d %ss: give the id of one (berth %s list)", s, n, strings.ToLower(r.noun), r.name)
		}
		return &it, nil
	}
	return nil, r.notFound(parent, s)
}

// named is how many of items s is a name of (the URL of two webhooks names neither).
func (r *resource[T]) named(items []T, s string) int {
	n := 0
	for _, it := range items {
		if r.names != nil && slices.Contains(r.names(it), s) {
			n++
		}
	}
	return n
}

// ref resolves the argument s (of parent) to what the API's calls take: s itself
// where the API reads names; else an id. A number is taken as an id as it is (the API
// judges it: 404), unless checkIDs; a name is looked up in all.
func (r *resource[T]) ref(ctx context.Context, c *client.Client, parent, s string) (ref, error) {
	if r.getRef != nil {
		if dotSegment(s) {
			return ref{}, r.notFound(parent, s)
		}
		return ref{arg: s}, nil
	}
	id, isID := asID(s)
	switch {
	case r.names == nil && !isID:
		return ref{}, fmt.Errorf("%s %q: want a numeric id", strings.ToLower(r.noun), s)
	case isID && !r.checkIDs:
		return ref{id: id}, nil
	}
	it, err := r.lookup(ctx, c, parent, s)
	if err != nil {
		return ref{}, err
	}
	return ref{id: r.id(*it)}, nil
}

// fetch is the resource the argument s (of parent) names, by id or by name: asked of
// the API where it has a call for one, else found in all.
func (r *resource[T]) fetch(ctx context.Context, c *client.Client, parent, s string) (*T, error) {
	switch {
	case r.getRef != nil && dotSegment(s):
		return nil, r.notFound(parent, s)
	case r.getRef != nil:
		return r.getRef(ctx, c, s)
	case r.get != nil:
		id, err := r.ref(ctx, c, parent, s)
		if err != nil {
			return nil, err
		}
		return r.get(ctx, c, id.id)
	}
	return r.lookup(ctx, c, parent, s)
}

func (r *resource[T]) viewFor(ctx context.Context, g *globals, c *client.Client, items []T) view[T] {
	if r.viewOf != nil {
		return r.viewOf(ctx, g, c, items)
	}
	return r.view
}

// printOne and printList print as the output flags say (output.go).
func (r *resource[T]) printOne(ctx context.Context, g *globals, c *client.Client, it T) error {
	return printOne(g, r.viewFor(ctx, g, c, []T{it}), it)
}

func (r *resource[T]) printList(ctx context.Context, g *globals, c *client.Client, items []T) error {
	return printList(g, r.viewFor(ctx, g, c, items), items)
}

// command is the resource's command group: own, and the shared commands it has.
func (r *resource[T]) command(g *globals, own ...*cobra.Command) *cobra.Command {
	cmd := group(r.name, r.short, own...)
	if r.listHelp != "" {
		cmd.AddCommand(r.listCmd(g))
	}
	if r.describeHelp != "" {
		cmd.AddCommand(r.describeCmd(g))
	}
	if r.update != nil {
		cmd.AddCommand(r.updateCmd(g))
	}
	if r.deleteHelp != "" {
		cmd.AddCommand(r.deleteCmd(g))
	}
	return cmd
}

// args is the usage of the arguments that name one ("KEY", "SERVER SNAPSHOT"), and
// the rule of their number.
func (r *resource[T]) args() (string, cobra.PositionalArgs) {
	if r.parent != "" {
		return r.parent + " " + r.arg, cobra.ExactArgs(2)
	}
	return r.arg, cobra.ExactArgs(1)
}

// split is the parent named in args ("" where there is none), and the rest.
func (r *resource[T]) split(args []string) (parent string, rest []string) {
	if r.parent != "" {
		return args[0], args[1:]
	}
	return "", args
}

// listCmd is "list": all (of parent), or what listFlags returns.
func (r *resource[T]) listCmd(g *globals) *cobra.Command {
	use, args := "list", cobra.NoArgs
	if r.parent != "" {
		use, args = use+" "+r.parent, cobra.ExactArgs(1)
	}
	if r.listUse != "" {
		use += " " + r.listUse
	}
	cmd := &cobra.Command{Use: use, Short: r.listHelp, Args: args}
	list := r.all
	if r.listFlags != nil {
		list = r.listFlags(cmd)
	}
	cmd.RunE = withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
		parent, _ := r.split(args)
		items, err := list(ctx, c, parent)
		if err != nil {
			return err
		}
		return r.printList(ctx, g, c, items)
	})
	return cmd
}

// describeCmd is "describe ARG": what ARG names.
func (r *resource[T]) describeCmd(g *globals) *cobra.Command {
	use, nargs := r.args()
	return &cobra.Command{
		Use: "describe " + use, Short: r.describeHelp, Args: nargs,
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			parent, rest := r.split(args)
			it, err := r.fetch(ctx, c, parent, rest[0])
			if err != nil {
				return err
			}
			return r.printOne(ctx, g, c, *it)
		}),
	}
}

// updateCmd is "update ARG ...": writes what ARG names and prints it as it then is.
func (r *resource[T]) updateCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "update " + r.arg + " " + r.update.use, Short: r.update.short, Args: cobra.ExactArgs(1)}
	write := r.update.flags(cmd)
	cmd.RunE = withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
		id, err := r.ref(ctx, c, "", args[0])
		if err != nil {
			return err
		}
		it, err := write(ctx, c, id)
		if err != nil {
			return err
		}
		return r.printOne(ctx, g, c, *it)
	})
	return cmd
}

// deleteCmd is "delete ARG" (with deleteMany "ARG...", each in turn): deletes what
// ARG names and notes it on stderr.
func (r *resource[T]) deleteCmd(g *globals) *cobra.Command {
	use, nargs := r.args()
	if r.deleteMany {
		use, nargs = use+"...", cobra.MinimumNArgs(1)
	}
	return &cobra.Command{
		Use: "delete " + use, Short: r.deleteHelp, Args: nargs,
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			parent, names := r.split(args)
			for _, s := range names {
				id, err := r.ref(ctx, c, parent, s)
				if err != nil {
					return err
				}
				result, err := r.del(ctx, c, parent, id)
				if err != nil {
					return err
				}
				if result == "" {
					g.note("%s %s deleted\n", upperFirst(r.noun), id.String())
				} else {
					g.note("%s %s: %s\n", upperFirst(r.noun), id.String(), result)
				}
			}
			return nil
		}),
	}
}

// withClient is the RunE of a command that calls the API.
func withClient(g *globals, f func(ctx context.Context, c *client.Client, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		c, err := g.client()
		if err != nil {
			return err
		}
		if err := serverArgs(cmd.Context(), c, cmd, args); err != nil {
			return err
		}
		return f(cmd.Context(), c, args)
	}
}

// serverArgs lets a display name name a server wherever a command takes one: the
// first argument of a command whose use line names SERVER there (SERVER...: every
// argument) and the flag --server. Each is replaced, in args and in the flag, by what
// serverArg resolves it to.
func serverArgs(ctx context.Context, c *client.Client, cmd *cobra.Command, args []string) error {
	if words := strings.Fields(cmd.Use); len(words) >= 2 && strings.HasPrefix(words[1], "SERVER") {
		n := min(1, len(args))
		if strings.HasPrefix(words[1], "SERVER...") {
			n = len(args)
		}
		for i := range n {
			s, err := serverArg(ctx, c, args[i])
			if err != nil {
				return err
			}
			args[i] = s
		}
	}
	if f := cmd.Flags().Lookup("server"); f != nil && f.Changed {
		s, err := serverArg(ctx, c, f.Value.String())
		if err != nil {
			return err
		}
		return f.Value.Set(s)
	}
	return nil
}

// serverArg is what the API is to be given for the server s names. A server's id or
// machine name wins (the API resolves either: s is given as it is); else s may be the
// display name of exactly one of the account's servers, whose id it is then. A display
// name several servers share is an error that lists them; a name none has is left for
// the API to answer (404).
func serverArg(ctx context.Context, c *client.Client, s string) (string, error) {
	// "." and ".." would not reach /servers/{server} as a segment of its path.
	if !dotSegment(s) {
		switch _, err := c.GetServer(ctx, s); {
		case err == nil:
			return s, nil
		case !errors.Is(err, client.ErrNotFound):
			return "", err // the command's own call would meet it too (401, a timeout)
		}
	}
	all, err := c.ListServers(ctx, client.ServerListOptions{})
	if err != nil {
		return s, nil
	}
	var named []string
	var id int64
	for _, srv := range all {
		if srv.DisplayName == s {
			named, id = append(named, fmt.Sprintf("%d (%s)", srv.ID, srv.Name)), srv.ID
		}
	}
	switch len(named) {
	case 0:
		return s, nil
	case 1:
		return i64(id), nil
	}
	return "", fmt.Errorf("%d servers are named %q: %s; give the id or the machine name of one", len(named), s, strings.Join(named, ", "))
}

func group(use, short string, subs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short}
	cmd.AddCommand(subs...)
	return cmd
}

// dotSegment reports whether s is "." or "..": as a segment of the API's path it
// would not name a resource but move the path (/servers/. is /servers/), and no id or
// name the API resolves is either (a server's display name may be: serverArg has
// made it an id by then).
func dotSegment(s string) bool { return s == "." || s == ".." }

// asID reads s as an id: a positive decimal number.
func asID(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n > 0
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func i64(n int64) string { return strconv.FormatInt(n, 10) }

func optI64(n *int64) string {
	if n == nil {
		return ""
	}
	return i64(*n)
}

func optStr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func optInt(n *int) string {
	if n == nil {
		return ""
	}
	return strconv.Itoa(*n)
}

// money shows an amount of the API (a decimal string, four decimals) in currency, as
// every table of the CLI does: "4.5100 EUR"; the amount alone where currency is "".
func money(amount, currency string) string {
	if currency == "" || amount == "" {
		return amount
	}
	return amount + " " + currency
}

func ts(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// optID shows an id that may be null ("" then, shown as "-").
func optID(id *int64) string {
	if id == nil {
		return ""
	}
	return i64(*id)
}

// operationSubject names what an operation changes, for a line about it: its server,
// or its volume.
func operationSubject(op *api.Operation) string {
	if op.ServerID != nil {
		return "server " + i64(*op.ServerID)
	}
	if op.VolumeID != nil {
		return "volume " + i64(*op.VolumeID)
	}
	return "operation " + i64(op.ID)
}
