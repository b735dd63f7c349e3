package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// Reads for the operators' metrics (internal/telemetry asks them at every scrape).
// They run on the read pool, beside any write, and use no placeholders.

// JobQueue implements store.Store from River's job table.
func (db *DB) JobQueue(ctx context.Context) (store.JobQueue, error) {
	var q store.JobQueue
	rows, err := db.read.QueryContext(ctx, `SELECT state, COUNT(*) FROM river_job
		WHERE state IN ('available', 'running', 'retryable') GROUP BY state`)
	counts, err := collect(rows, err, scanCount)
	if err != nil {
		return q, err
	}
	for _, c := range counts {
		switch c.key {
		case "available":
			q.Available = c.n
		case "running":
			q.Running = c.n
		case "retryable":
			q.Retryable = c.n
		}
	}
	if q.Available == 0 {
		return q, nil
	}
	// The column itself (not MIN of it) keeps its declared type, which the SQLite
	// driver reads as a time; River writes it in UTC.
	var at time.Time
	err = db.read.QueryRowContext(ctx, `SELECT scheduled_at FROM river_job WHERE state = 'available'
		ORDER BY scheduled_at LIMIT 1`).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) { // taken meanwhile
		return q, nil
	}
	if err != nil {
		return q, err
	}
	at = at.UTC()
	q.OldestAvailable = &at
	return q, nil
}

// ServersByStatus implements store.Store.
func (db *DB) ServersByStatus(ctx context.Context) (map[hosting.Status]int, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT CASE WHEN suspended <> 0 THEN 'suspended' ELSE status END AS shown, COUNT(*)
		FROM servers WHERE deleted_at IS NULL GROUP BY shown`)
	counts, err := collect(rows, err, scanCount)
	if err != nil {
		return nil, err
	}
	out := map[hosting.Status]int{}
	for _, c := range counts {
		out[hosting.Status(c.key)] += c.n
	}
	return out, nil
}

// count is a row of a GROUP BY: the group's key and its COUNT(*).
type count struct {
	key string
	n   int
}

func scanCount(sc func(...any) error) (c count, err error) {
	err = sc(&c.key, &c.n)
	return c, err
}

// Setting implements store.Store.
func (db *DB) Setting(ctx context.Context, name string) (string, error) {
	var v string
	err := db.read.QueryRowContext(ctx, db.Rebind(`SELECT value FROM settings WHERE name = ?`), name).Scan(&v)
	return v, notFound(err)
}

// PutSetting implements store.Store.
func (db *DB) PutSetting(ctx context.Context, name, value string, at time.Time) error {
	_, err := db.write.ExecContext(ctx, db.Rebind(`INSERT INTO settings (name, value, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`), name, value, ms(at))
	return err
}
