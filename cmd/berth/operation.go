package main

import (
	"context"
	"iter"

	"github.com/spf13/cobra"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

var operations = &resource[api.Operation]{
	name: "operation", short: "Operations on servers and volumes", noun: "operation", arg: "OPERATION",
	view: view[api.Operation]{
		id: func(o api.Operation) string { return i64(o.ID) },
		columns: []column[api.Operation]{
			{name: "id", value: func(o api.Operation) string { return i64(o.ID) }},
			{name: "type", value: func(o api.Operation) string { return o.Type }},
			{name: "server_id", value: func(o api.Operation) string { return optID(o.ServerID) }},
			{name: "volume_id", wide: true, value: func(o api.Operation) string { return optID(o.VolumeID) }},
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
	},
	// An operation has no name: only its id names it.
	id: func(o api.Operation) int64 { return o.ID },
	get: func(ctx context.Context, c *client.Client, id int64) (*api.Operation, error) {
		return c.GetOperation(ctx, id)
	},
	listHelp:     "List operations, newest first",
	listUse:      "[--server SERVER] [--volume VOLUME] [--status STATUS] [--limit N]",
	listFlags:    operationListFlags,
	describeHelp: "Show an operation",
}

// operationListFlags are list's flags: a server's and a volume's operations (each
// by name or id), in a status, at most limit of them.
func operationListFlags(cmd *cobra.Command) func(context.Context, *client.Client, string) ([]api.Operation, error) {
	var server, volume, status string
	var limit int
	cmd.Flags().StringVar(&server, "server", "", "only this server's operations (name or id)")
	cmd.Flags().StringVar(&volume, "volume", "", "only this volume's operations (name or id; a deleted volume's by id)")
	cmd.Flags().StringVar(&status, "status", "", "running, success or error")
	cmd.Flags().IntVar(&limit, "limit", 50, "at most this many (0: all)")
	return func(ctx context.Context, c *client.Client, _ string) ([]api.Operation, error) {
		seq, err := operationSeq(ctx, c, server, volume, client.OperationListOptions{Status: status})
		if err != nil {
			return nil, err
		}
		var all []api.Operation
		for o, err := range seq {
			if err != nil {
				return nil, err
			}
			all = append(all, o)
			if limit > 0 && len(all) >= limit {
				break
			}
		}
		return all, nil
	}
}

// operationSeq walks the operations opts admit, of server and of volume ("": any). A
// server alone is asked for by its path (the API resolves its name); with a volume,
// both go as ids to GET /operations.
func operationSeq(ctx context.Context, c *client.Client, server, volume string, opts client.OperationListOptions) (iter.Seq2[api.Operation, error], error) {
	if volume == "" {
		if server != "" {
			return c.AllServerOperations(ctx, server, opts), nil
		}
		return c.AllOperations(ctx, opts), nil
	}
	id, err := volumeID(ctx, c, volume)
	if err != nil {
		return nil, err
	}
	opts.VolumeID = id
	if server != "" {
		if opts.ServerID, err = serverID(ctx, c, server); err != nil {
			return nil, err
		}
	}
	return c.AllOperations(ctx, opts), nil
}

func operationCmd(g *globals) *cobra.Command {
	wait := &cobra.Command{
		Use: "wait OPERATION", Short: "Wait for an operation to end (exit 7 if it ends in error)", Args: cobra.ExactArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			op, err := operations.fetch(ctx, c, "", args[0])
			if err != nil {
				return err
			}
			if op.Status == client.OperationStatusRunning {
				if op, err = waitOperation(ctx, g, c, &api.OperationRef{ID: op.ID, Type: op.Type, StartedAt: op.StartedAt}, operationSubject(op)); err != nil && op == nil {
					return err
				}
			}
			if perr := operations.printOne(ctx, g, c, *op); perr != nil {
				return perr
			}
			if op.Status == client.OperationStatusError {
				return &client.OperationError{Operation: op}
			}
			return nil
		}),
	}
	return operations.command(g, wait)
}
