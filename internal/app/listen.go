package app

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/berthhq/berth/internal/store/sqlstore"
)

// listenOperationsEnded wakes the ?wait requests of this process on what another
// process wrote, as soon as its transaction commits: an operation that ended
// (sqlstore.OperationEndedChannel: ended gets its id) and an account's events
// (sqlstore.EventsChannel: events gets the account's id), and a change of what DNS
// serves (sqlstore.DNSChannel: dnsChanged, called too each time it starts listening,
// as what was notified meanwhile is lost), and a write of what the read cache holds
// from outside Berth (sqlstore.ForeignWriteChannel: foreignWrite(true), called too
// each time it starts listening, and foreignWrite(false) when listening fails: the
// cache then bounds its entries' age). It holds a connection of
// pool of its own for as long as it runs, taking a new one when that breaks;
// meanwhile a ?wait still ends, by its polling. It stops when the returned function
// is called.
func listenOperationsEnded(pool *pgxpool.Pool, ended, events func(id int64), dnsChanged func(), foreignWrite func(watching bool),
	log *slog.Logger) (stop func()) {
	handlers := map[string]func(int64){sqlstore.OperationEndedChannel: ended, sqlstore.EventsChannel: events,
		sqlstore.DNSChannel: func(int64) { dnsChanged() }, sqlstore.ForeignWriteChannel: func(int64) { foreignWrite(true) }}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		// A failure is logged when listening stops, not at each retry a second while
		// the database is away; its return is logged too.
		var failedAt time.Time
		listening := func() {
			dnsChanged()
			foreignWrite(true)
			if !failedAt.IsZero() {
				log.Info("notifications of operations and events: listening again", "after", time.Since(failedAt).Round(time.Millisecond).String())
				failedAt = time.Time{}
			}
		}
		for ctx.Err() == nil {
			err := listenOnce(ctx, pool, handlers, listening)
			if ctx.Err() != nil {
				return
			}
			foreignWrite(false)
			if failedAt.IsZero() {
				log.Warn("notifications of operations and events: listening failed; ?wait polls until it is back", "err", err)
				failedAt = time.Now()
			}
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	})
	return func() {
		cancel()
		wg.Wait()
	}
}

// listenOnce listens on one connection until it breaks; listening is called once
// it listens.
func listenOnce(ctx context.Context, pool *pgxpool.Pool, handlers map[string]func(int64), listening func()) error {
	pc, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// Out of the pool for good: a connection that LISTENs is not one to lend out.
	conn := pc.Hijack()
	defer conn.Close(context.Background())
	for channel := range handlers {
		if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
			return err
		}
	}
	listening()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if id, err := strconv.ParseInt(n.Payload, 10, 64); err == nil && handlers[n.Channel] != nil {
			handlers[n.Channel](id)
		}
	}
}
