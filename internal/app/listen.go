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
// (sqlstore.EventsChannel: events gets the account's id). It holds a connection of
// pool of its own for as long as it runs, taking a new one when that breaks;
// meanwhile a ?wait still ends, by its polling. It stops when the returned function
// is called.
func listenOperationsEnded(pool *pgxpool.Pool, ended, events func(id int64), log *slog.Logger) (stop func()) {
	handlers := map[string]func(int64){sqlstore.OperationEndedChannel: ended, sqlstore.EventsChannel: events}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			err := listenOnce(ctx, pool, handlers)
			if ctx.Err() != nil {
				return
			}
			log.Warn("notifications of operations and events: listening failed; ?wait polls until it is back", "err", err)
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

func listenOnce(ctx context.Context, pool *pgxpool.Pool, handlers map[string]func(int64)) error {
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
