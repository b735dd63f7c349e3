package sqlstore

import (
	"context"
	"database/sql"
	"log/slog"
	"time"
)

// The checkpointer copies the WAL's pages into berth.db on a connection of its own,
// beside the writer, so that the writer's commits seldom have to.
//
// SQLite checkpoints in the commit that takes the WAL past 1,000 pages
// (wal_autocheckpoint): that commit, and every write queued behind the one writer,
// waits while the pages are read back, written to the database file and synced. In a
// metering pass that was an eighth of the writer's time (bench/metering.sh). This
// goroutine checkpoints (PASSIVE: it never waits for a reader or the writer, and
// copies what the readers' snapshots allow) when a commit tells it the WAL grew, and
// once a second besides for writes made outside DB.InTx; the writer's own checkpoint
// then finds most pages copied already. That one stays on: only the writer can
// finish a checkpoint between two of its transactions, which lets the next one start
// the WAL over. Without it, under writes back to back (a metering catch-up), the
// checkpointer never caught up with the last frame and the WAL grew without bound: to
// 1.1 GiB in a pass over 200,000 meters, 12.5 GiB at 2,000,000.
type checkpointer struct {
	db   *sql.DB
	kick chan struct{}
	stop chan struct{}
	done chan struct{}
}

// checkpointEvery is how often the checkpointer looks when no commit kicked it.
const checkpointEvery = time.Second

func startCheckpointer(db *sql.DB) *checkpointer {
	c := &checkpointer{db: db, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c
}

// committed tells the checkpointer a write transaction committed. It never blocks.
func (c *checkpointer) committed() {
	if c == nil {
		return
	}
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *checkpointer) run() {
	defer close(c.done)
	t := time.NewTicker(checkpointEvery)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-c.stop:
			return
		case <-c.kick:
		case <-t.C:
		}
		// Told when it starts failing (a full disk) and when it works again, not
		// every second in between.
		err := c.checkpoint()
		switch {
		case err != nil && !failing:
			slog.Warn("sqlite checkpoint failed; the WAL grows until one succeeds", "err", err)
		case err == nil && failing:
			slog.Info("sqlite checkpoint works again")
		}
		failing = err != nil
	}
}

// checkpoint runs one PASSIVE checkpoint.
func (c *checkpointer) checkpoint() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var busy, log, done int
	return c.db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &log, &done)
}

func (c *checkpointer) close() error {
	if c == nil {
		return nil
	}
	close(c.stop)
	<-c.done
	return c.db.Close()
}
