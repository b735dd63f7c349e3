package sqlstore

import (
	"context"
	"database/sql"
	"log/slog"
	"time"
)

// The checkpointer copies the WAL's pages into berth.db on a connection of its own,
// beside the writer, rather than in the writer's commit.
//
// SQLite's default (wal_autocheckpoint) checkpoints in the commit that takes the WAL
// past 1,000 pages: that commit, and every write queued behind the one writer, waits
// while the pages are read back, written to the database file and synced. In a
// metering pass that was an eighth of the writer's time (bench/metering.sh). The
// write connection runs with wal_autocheckpoint(0) and this goroutine checkpoints
// (PASSIVE: it never waits for a reader or the writer, and copies what the readers'
// snapshots allow) when a commit tells it the WAL grew, and once a second besides for
// writes made outside DB.InTx. SQLite's own close still checkpoints the rest.
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
