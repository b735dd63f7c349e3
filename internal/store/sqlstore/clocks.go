package sqlstore

import (
	"context"
	"time"
)

// The sandbox's test clocks (API-DECISIONS §11): account_clocks holds how far each
// account's clock runs ahead of the system clock.

func (q queries) ClockOffsets(ctx context.Context) (map[int64]time.Duration, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT account_id, offset_ms FROM account_clocks`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]time.Duration{}
	for rows.Next() {
		var id, off int64
		if err := rows.Scan(&id, &off); err != nil {
			return nil, err
		}
		out[id] = time.Duration(off) * time.Millisecond
	}
	return out, rows.Err()
}

func (q queries) AdvanceClock(ctx context.Context, accountID int64, by time.Duration) (time.Duration, error) {
	var off int64
	err := q.q.QueryRowContext(ctx, `INSERT INTO account_clocks (account_id, offset_ms) VALUES (?, ?)
		ON CONFLICT (account_id) DO UPDATE SET offset_ms = account_clocks.offset_ms + excluded.offset_ms
		RETURNING offset_ms`, accountID, by.Milliseconds()).Scan(&off)
	return time.Duration(off) * time.Millisecond, err
}

func (q queries) ResetClock(ctx context.Context, accountID int64) error {
	_, err := q.q.ExecContext(ctx, `DELETE FROM account_clocks WHERE account_id = ?`, accountID)
	return err
}
