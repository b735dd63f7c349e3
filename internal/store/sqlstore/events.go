package sqlstore

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/berthhq/berth/internal/hosting"
)

// EventsChannel is the PostgreSQL channel on which the id of every account that has
// new events is notified, when the transaction that wrote them commits.
const EventsChannel = "berth_events"

const eventCols = `id, account_id, type, resource_type, resource_id, data, request_id, created_at`

func scanEvent(sc func(...any) error) (hosting.Event, error) {
	var e hosting.Event
	var data string
	var created int64
	if err := sc(&e.ID, &e.AccountID, &e.Type, &e.Resource.Type, &e.Resource.ID, &data, &e.RequestID, &created); err != nil {
		return e, err
	}
	e.Data, e.CreatedAt = []byte(data), fromMS(created)
	return e, nil
}

func (q queries) AddEvents(ctx context.Context, events []hosting.Event) ([]hosting.Event, error) {
	accounts := make([]int64, 0, 1)
	for _, e := range events {
		if !slices.Contains(accounts, e.AccountID) {
			accounts = append(accounts, e.AccountID)
		}
	}
	// In one order, so that two transactions of the same accounts never wait on each
	// other's turn.
	slices.Sort(accounts)
	for _, a := range accounts {
		// Nothing an event write does under the turn locks a row another transaction
		// may hold while it waits for the turn: events name their account without a
		// foreign key, whose check would lock the account's row (the migration).
		if err := q.Serialize(ctx, "events-"+strconv.FormatInt(a, 10)); err != nil {
			return nil, err
		}
	}
	out := slices.Clone(events)
	for i, e := range out {
		id, err := q.insert(ctx, `INSERT INTO events (account_id, type, resource_type, resource_id, data, request_id, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, e.AccountID, string(e.Type), e.Resource.Type, e.Resource.ID, string(e.Data),
			e.RequestID, ms(e.CreatedAt))
		if err != nil {
			return nil, err
		}
		out[i].ID = id
	}
	if q.d == dialectPostgres {
		for _, a := range accounts {
			if _, err := q.q.ExecContext(ctx, `SELECT pg_notify('`+EventsChannel+`', ?)`, strconv.FormatInt(a, 10)); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func (q queries) Events(ctx context.Context, accountID int64, f hosting.EventFilter) ([]hosting.Event, error) {
	var where strings.Builder
	args := []any{accountID, f.After}
	where.WriteString(`account_id = ? AND id > ?`)
	if f.Before > 0 {
		where.WriteString(` AND id < ?`)
		args = append(args, f.Before)
	}
	if f.Resource != nil {
		where.WriteString(` AND resource_type = ? AND resource_id = ?`)
		args = append(args, f.Resource.Type, f.Resource.ID)
	}
	if cond, cargs := typeCondition(f.Types); cond != "" {
		where.WriteString(" AND (" + cond + ")")
		args = append(args, cargs...)
	}
	order := `id`
	if f.Newest {
		order = `id DESC`
	}
	args = append(args, f.Limit)
	rows, err := q.q.QueryContext(ctx, `SELECT `+eventCols+` FROM events WHERE `+where.String()+` ORDER BY `+order+` LIMIT ?`, args...)
	return orEmpty(collect(rows, err, scanEvent))
}

// typeCondition is the SQL that admits the types of patterns ("" admits all). A glob
// compares a prefix with substr, not LIKE, whose _ would match any character.
func typeCondition(patterns []hosting.EventPattern) (string, []any) {
	var conds []string
	var args []any
	for _, p := range patterns {
		prefix, glob := p.Prefix()
		switch {
		case glob && prefix == "":
			return "", nil
		case glob:
			conds = append(conds, `substr(type, 1, `+strconv.Itoa(len(prefix))+`) = ?`)
		default:
			conds = append(conds, `type = ?`)
		}
		args = append(args, prefix)
	}
	return strings.Join(conds, " OR "), args
}

func (q queries) PruneEvents(ctx context.Context, before time.Time, limit int) (int, error) {
	res, err := q.q.ExecContext(ctx, `DELETE FROM events WHERE id IN
		(SELECT id FROM events WHERE created_at < ? ORDER BY created_at, id LIMIT ?)`, ms(before), limit)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}
