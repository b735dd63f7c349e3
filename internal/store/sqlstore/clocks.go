package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/berthhq/berth/internal/hosting"
)

// The sandbox's test clocks (docs/api.md, The sandbox): account_clocks holds how far each
// account's clock runs ahead of the system clock, in milliseconds. Every offset is
// read through hosting.ClockOffset (0 to hosting.MaxClockAhead), and no advance
// stores one past that limit, so no sum or conversion of an offset can overflow.

func (q queries) ClockOffsets(ctx context.Context) (map[int64]time.Duration, error) {
	type clock struct{ account, offset int64 }
	rows, err := q.q.QueryContext(ctx, `SELECT account_id, offset_ms FROM account_clocks`)
	clocks, err := collect(rows, err, func(sc func(...any) error) (c clock, err error) {
		err = sc(&c.account, &c.offset)
		return c, err
	})
	if err != nil {
		return nil, err
	}
	out := make(map[int64]time.Duration, len(clocks))
	for _, c := range clocks {
		out[c.account] = hosting.ClockOffset(c.offset)
	}
	return out, nil
}

func (q queries) AdvanceClock(ctx context.Context, accountID int64, by time.Duration) (time.Duration, bool, error) {
	if by <= 0 || by%time.Millisecond != 0 {
		return 0, false, fmt.Errorf("advance a clock by %s: not a positive number of milliseconds", by)
	}
	if by <= hosting.MaxClockAhead {
		// The update's condition keeps the sum at most the limit: it is checked
		// before the sum is made, so even an offset stored near MaxInt64 does not
		// overflow; a clock that may not move returns no row.
		var off int64
		err := q.q.QueryRowContext(ctx, `INSERT INTO account_clocks (account_id, offset_ms) VALUES (?, ?)
			ON CONFLICT (account_id) DO UPDATE SET offset_ms = account_clocks.offset_ms + excluded.offset_ms
			WHERE account_clocks.offset_ms <= ? - excluded.offset_ms
			RETURNING offset_ms`, accountID, by.Milliseconds(), hosting.MaxClockAhead.Milliseconds()).Scan(&off)
		if err == nil {
			return hosting.ClockOffset(off), true, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return 0, false, err
		}
	}
	var off int64
	err := q.q.QueryRowContext(ctx, `SELECT offset_ms FROM account_clocks WHERE account_id = ?`, accountID).Scan(&off)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return hosting.ClockOffset(off), false, err
}

func (q queries) ResetClock(ctx context.Context, accountID int64) error {
	_, err := q.q.ExecContext(ctx, `DELETE FROM account_clocks WHERE account_id = ?`, accountID)
	return err
}
