package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/berthhq/berth/api"
)

// EventListOptions narrow ListEvents and Events; zero values narrow nothing.
type EventListOptions struct {
	// After is the cursor: the id of the last event read (EventList.Meta.NextAfter).
	After int64
	// Types are event types ("server.created"), a resource's types ("server.*") or
	// "*".
	Types []string
	// Resource is one resource, as "type:id" ("server:12").
	Resource string
	// Limit is at most how many (1 to 1000; 0: the API's default, 100).
	Limit int
	// Wait holds an answer that would be empty until an event comes, up to Wait
	// (rounded to whole seconds, 1 to 60; 0: no holding).
	Wait time.Duration
}

func (o EventListOptions) query() url.Values {
	q := url.Values{}
	if o.After != 0 {
		q.Set("after", strconv.FormatInt(o.After, 10))
	}
	if len(o.Types) > 0 {
		q.Set("types", strings.Join(o.Types, ","))
	}
	if o.Resource != "" {
		q.Set("resource", o.Resource)
	}
	if o.Limit != 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.Wait > 0 {
		q.Set("wait", strconv.Itoa(min(max(int(o.Wait.Round(time.Second)/time.Second), 1), maxWait)))
	}
	return q
}

// ListEvents returns one batch of the account's events after opts.After, oldest
// first, with the cursor for the next (Meta.NextAfter). ErrValidation: a bad option
// (an unknown type included).
func (c *Client) ListEvents(ctx context.Context, opts EventListOptions) (*api.EventList, error) {
	var out api.EventList
	if err := c.do(ctx, http.MethodGet, "/events", opts.query(), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Events walks the account's events after opts.After, oldest first, across as many
// calls as it takes. With opts.Wait 0 it ends once it has read every event there is;
// with opts.Wait > 0 it follows: it holds each call that finds nothing for up to
// opts.Wait (counted once against the rate limit) and goes on until ctx ends or the
// loop breaks, so a program reacts to each change as it commits. Keep the last
// event's ID to go on later without missing or repeating one. The walk stops at the
// first error, yielded with the zero Event.
func (c *Client) Events(ctx context.Context, opts EventListOptions) iter.Seq2[api.Event, error] {
	follow := opts.Wait > 0
	return func(yield func(api.Event, error) bool) {
		for {
			call := opts
			if follow { // held no longer than ctx and the HTTP client allow
				secs := min(max(int(opts.Wait.Round(time.Second)/time.Second), 1), c.waitSeconds(ctx))
				call.Wait = time.Duration(secs) * time.Second
			}
			l, err := c.ListEvents(ctx, call)
			if err != nil {
				if follow && ctx.Err() != nil {
					return // following ends with its context
				}
				yield(api.Event{}, err)
				return
			}
			for _, e := range l.Data {
				if !yield(e, nil) {
					return
				}
			}
			opts.After = l.Meta.NextAfter
			if !l.Meta.HasMore && (!follow || ctx.Err() != nil) {
				return
			}
		}
	}
}
