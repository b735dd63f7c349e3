package client

import (
	"context"
	"iter"

	"github.com/berthhq/berth/api"
)

// AllTransactions yields the whole ledger, newest first, fetching page after page as
// the loop asks for more. An error ends the sequence with (zero, err). Entries added
// while it runs push older ones onto later pages; none is yielded twice.
func (c *Client) AllTransactions(ctx context.Context) iter.Seq2[api.Transaction, error] {
	return walk(ctx, func(ctx context.Context, p int) (*api.Page[api.Transaction], error) {
		return c.ListTransactions(ctx, p)
	}, func(t api.Transaction) int64 { return t.ID })
}

// AllOperations yields the account's operations, newest first, as filtered by opts
// (opts.Page is ignored), page after page; as AllTransactions.
func (c *Client) AllOperations(ctx context.Context, opts OperationListOptions) iter.Seq2[api.Operation, error] {
	return walk(ctx, func(ctx context.Context, p int) (*api.Page[api.Operation], error) {
		opts.Page = p
		return c.ListOperations(ctx, opts)
	}, func(o api.Operation) int64 { return o.ID })
}

// AllServerOperations yields a server's operations, newest first, as filtered by
// opts (opts.Page is ignored), page after page; as AllTransactions.
func (c *Client) AllServerOperations(ctx context.Context, server string, opts OperationListOptions) iter.Seq2[api.Operation, error] {
	return walk(ctx, func(ctx context.Context, p int) (*api.Page[api.Operation], error) {
		opts.Page = p
		return c.ListServerOperations(ctx, server, opts)
	}, func(o api.Operation) int64 { return o.ID })
}

// walk yields the items of pages 1, 2, ... of a list ordered by descending id,
// skipping an item whose id is not below the last one yielded (an item seen on the
// previous page, pushed onto this one by a newer entry).
func walk[T any](ctx context.Context, fetch func(context.Context, int) (*api.Page[T], error), id func(T) int64) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var last int64
		for p := 1; ; p++ {
			pg, err := fetch(ctx, p)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, v := range pg.Data {
				if last != 0 && id(v) >= last {
					continue
				}
				last = id(v)
				if !yield(v, nil) {
					return
				}
			}
			if len(pg.Data) == 0 || p >= pg.Meta.LastPage {
				return
			}
		}
	}
}

// AllWebhookDeliveries yields a webhook's delivery log, newest first, page after
// page; as AllTransactions. ErrNotFound.
func (c *Client) AllWebhookDeliveries(ctx context.Context, id int64) iter.Seq2[api.WebhookDelivery, error] {
	return walk(ctx, func(ctx context.Context, p int) (*api.Page[api.WebhookDelivery], error) {
		return c.ListWebhookDeliveries(ctx, id, p)
	}, func(d api.WebhookDelivery) int64 { return d.ID })
}
