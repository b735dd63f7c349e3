package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// queries implements store.Reader and store.Writer on a pool or a transaction.
type queries struct {
	q querier
	d dialect
	// tx: the queries run in a write transaction.
	tx bool
}

func ms(t time.Time) int64 { return t.UTC().UnixMilli() }

func msPtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return ms(*t)
}

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

func fromNullMS(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMS(v.Int64)
	return &t
}

func nullInt(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	x := v.Int64
	return &x
}

func nullStr(v sql.NullString) *string {
	if !v.Valid {
		return nil
	}
	x := v.String
	return &x
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// notFound maps sql.ErrNoRows to store.ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	return err
}

// conflict maps a unique-constraint failure to store.ErrConflict.
func conflict(err error) error {
	if err != nil && (strings.Contains(err.Error(), "UNIQUE constraint failed") || strings.Contains(err.Error(), "duplicate key value")) {
		return fmt.Errorf("%w: %v", store.ErrConflict, err)
	}
	return err
}

func (q queries) insert(ctx context.Context, query string, args ...any) (int64, error) {
	var id int64
	err := q.q.QueryRowContext(ctx, query+" RETURNING id", args...).Scan(&id)
	return id, conflict(err)
}

// exec runs a write that must touch exactly one row (else store.ErrNotFound).
func (q queries) execOne(ctx context.Context, query string, args ...any) error {
	res, err := q.q.ExecContext(ctx, query, args...)
	if err != nil {
		return conflict(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// ---- accounts and tokens ----

const accountCols = `a.id, a.email, a.name, a.password_hash, a.language, a.currency, a.credit, a.budget, a.blocked, ` +
	`a.server_quota, a.quota_ssh_keys, a.quota_projects, a.quota_recipes, a.quota_snapshots, a.quota_tokens, a.quota_volumes, ` +
	`a.quota_volume_gb, a.quota_zones, a.quota_tickets, a.quota_attachment_mb, a.staff, a.created_at`

// accountDest is where a row of accountCols scans to; finish completes a from it.
func accountDest(a *hosting.Account) (dest []any, finish func()) {
	var created, credit int64
	var budget sql.NullInt64
	q := &a.Quotas
	dest = []any{&a.ID, &a.Email, &a.Name, &a.PasswordHash, &a.Language, &a.Currency, &credit, &budget, &a.Blocked,
		&q.Servers, &q.SSHKeys, &q.Projects, &q.Recipes, &q.Snapshots, &q.Tokens, &q.Volumes, &q.VolumeGB, &q.Zones,
		&q.Tickets, &q.AttachmentMB, &a.Staff, &created}
	return dest, func() { a.Credit, a.Budget, a.CreatedAt = hosting.Money(credit), nullMoney(budget), fromMS(created) }
}

func scanAccount(sc func(...any) error, extra ...any) (hosting.Account, error) {
	var a hosting.Account
	dest, finish := accountDest(&a)
	if err := sc(append(dest, extra...)...); err != nil {
		return a, notFound(err)
	}
	finish()
	return a, nil
}

func nullMoney(v sql.NullInt64) *hosting.Money {
	if !v.Valid {
		return nil
	}
	m := hosting.Money(v.Int64)
	return &m
}

func moneyPtr(m *hosting.Money) any {
	if m == nil {
		return nil
	}
	return int64(*m)
}

func (q queries) Account(ctx context.Context, id int64) (hosting.Account, error) {
	return scanAccount(q.q.QueryRowContext(ctx, `SELECT `+accountCols+` FROM accounts a WHERE a.id = ?`, id).Scan)
}

func (q queries) AccountByEmail(ctx context.Context, email string) (hosting.Account, error) {
	if strings.ContainsRune(email, 0) {
		// No account's email holds a NUL, and PostgreSQL refuses one in a parameter
		// (sign-in and password-reset forms send what is typed).
		return hosting.Account{}, store.ErrNotFound
	}
	return scanAccount(q.q.QueryRowContext(ctx, `SELECT `+accountCols+` FROM accounts a WHERE a.email = ?`, email).Scan)
}

func (q queries) Accounts(ctx context.Context, after int64, limit int) ([]hosting.Account, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+accountCols+` FROM accounts a WHERE a.id > ? ORDER BY a.id LIMIT ?`, after, limit)
	return orEmpty(collect(rows, err, func(sc func(...any) error) (hosting.Account, error) { return scanAccount(sc) }))
}

func (q queries) CreateAccount(ctx context.Context, a hosting.Account) (int64, error) {
	k := a.Quotas
	return q.insert(ctx, `INSERT INTO accounts (email, name, password_hash, language, currency, credit, blocked, server_quota,
		quota_ssh_keys, quota_projects, quota_recipes, quota_snapshots, quota_tokens, quota_volumes, quota_volume_gb, quota_zones, quota_tickets,
		quota_attachment_mb, staff, created_at)
		VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, a.Email, a.Name, a.PasswordHash, a.Language, a.Currency, b2i(a.Blocked),
		k.Servers, k.SSHKeys, k.Projects, k.Recipes, k.Snapshots, k.Tokens, k.Volumes, k.VolumeGB, k.Zones, k.Tickets, k.AttachmentMB,
		b2i(a.Staff), ms(a.CreatedAt))
}

func (q queries) SetQuotas(ctx context.Context, id int64, k hosting.Quotas) error {
	return q.execOne(ctx, `UPDATE accounts SET server_quota = ?, quota_ssh_keys = ?, quota_projects = ?, quota_recipes = ?,
		quota_snapshots = ?, quota_tokens = ?, quota_volumes = ?, quota_volume_gb = ?, quota_zones = ?, quota_tickets = ?,
		quota_attachment_mb = ? WHERE id = ?`,
		k.Servers, k.SSHKeys, k.Projects, k.Recipes, k.Snapshots, k.Tokens, k.Volumes, k.VolumeGB, k.Zones, k.Tickets, k.AttachmentMB, id)
}

// LockAccount implements store.Writer. SQLite's write transactions run one at a time
// (BEGIN IMMEDIATE), so reading the row is all it takes; PostgreSQL reads it FOR
// UPDATE, so that another transaction that locks it waits for this one to end.
func (q queries) LockAccount(ctx context.Context, id int64) (hosting.Account, error) {
	return scanAccount(q.q.QueryRowContext(ctx, `SELECT `+accountCols+` FROM accounts a WHERE a.id = ?`+q.forUpdate(), id).Scan)
}

func (q queries) Usage(ctx context.Context, accountID int64, now time.Time) (hosting.Quotas, error) {
	var u hosting.Quotas
	// Servers, volumes and snapshots are counted by triggers as their rows change
	// (migration 00031, PostgreSQL 00026): an account may hold millions of them, and
	// this runs in every order's write transaction. The others are counted here;
	// their quotas keep them small.
	err := q.q.QueryRowContext(ctx, `SELECT a.usage_servers,
		(SELECT COUNT(*) FROM ssh_keys WHERE account_id = a.id),
		(SELECT COUNT(*) FROM projects WHERE account_id = a.id),
		(SELECT COUNT(*) FROM recipes WHERE account_id = a.id),
		a.usage_snapshots,
		(SELECT COUNT(*) FROM tokens WHERE account_id = a.id AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)),
		a.usage_volumes, a.usage_volume_gb,
		(SELECT COUNT(*) FROM zones WHERE account_id = a.id),
		(SELECT COUNT(*) FROM tickets WHERE account_id = a.id AND status <> 'closed'),
		(SELECT (CAST(COALESCE(SUM(size), 0) AS BIGINT) + 1048575) / 1048576 FROM attachments WHERE account_id = a.id)
		FROM accounts a WHERE a.id = ?`,
		ms(now), accountID).Scan(&u.Servers, &u.SSHKeys, &u.Projects, &u.Recipes, &u.Snapshots, &u.Tokens, &u.Volumes, &u.VolumeGB, &u.Zones,
		&u.Tickets, &u.AttachmentMB)
	if errors.Is(err, sql.ErrNoRows) {
		// No such account holds nothing, as the counts said before.
		return hosting.Quotas{}, nil
	}
	return u, err
}

func (q queries) SetAccountBlocked(ctx context.Context, id int64, blocked bool) error {
	return q.execOne(ctx, `UPDATE accounts SET blocked = ? WHERE id = ?`, b2i(blocked), id)
}

const tokenCols = `t.id, t.account_id, t.name, t.hash, t.scopes, t.expires_at, t.last_used_at, t.revoked_at, t.created_at`

func scanToken(sc func(...any) error, extra ...any) (hosting.Token, error) {
	var t hosting.Token
	var scopes string
	var exp, used, rev sql.NullInt64
	var created int64
	dest := append([]any{&t.ID, &t.AccountID, &t.Name, &t.Hash, &scopes, &exp, &used, &rev, &created}, extra...)
	if err := sc(dest...); err != nil {
		return t, notFound(err)
	}
	t.Scopes, _ = hosting.ParseScopes(scopes)
	t.ExpiresAt, t.LastUsedAt, t.RevokedAt, t.CreatedAt = fromNullMS(exp), fromNullMS(used), fromNullMS(rev), fromMS(created)
	return t, nil
}

const tokenByHashQuery = `SELECT ` + tokenCols + `, ` + accountCols + ` FROM tokens t JOIN accounts a ON a.id = t.account_id WHERE t.hash = ?`

func (q queries) TokenByHash(ctx context.Context, hash []byte) (hosting.Token, hosting.Account, error) {
	return scanTokenAccount(q.q.QueryRowContext(ctx, tokenByHashQuery, hash).Scan)
}

func scanTokenAccount(scan func(...any) error) (hosting.Token, hosting.Account, error) {
	var a hosting.Account
	dest, finish := accountDest(&a)
	t, err := scanToken(scan, dest...)
	finish()
	return t, a, err
}

func (q queries) Token(ctx context.Context, id int64) (hosting.Token, error) {
	return scanToken(q.q.QueryRowContext(ctx, `SELECT `+tokenCols+` FROM tokens t WHERE t.id = ?`, id).Scan)
}

func (q queries) Tokens(ctx context.Context, accountID int64) ([]hosting.Token, error) {
	return q.tokens(ctx, `t.account_id = ?`, accountID)
}

// tokens lists the tokens that match where (a condition on tokens t), newest first.
func (q queries) tokens(ctx context.Context, where string, args ...any) ([]hosting.Token, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+tokenCols+` FROM tokens t WHERE `+where+` ORDER BY t.id DESC`, args...)
	return orEmpty(collect(rows, err, func(sc func(...any) error) (hosting.Token, error) { return scanToken(sc) }))
}

func (q queries) CreateToken(ctx context.Context, t hosting.Token) (int64, error) {
	return q.insert(ctx, `INSERT INTO tokens (account_id, name, hash, scopes, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		t.AccountID, t.Name, t.Hash, t.Scopes.String(), msPtr(t.ExpiresAt), ms(t.CreatedAt))
}

func (q queries) RevokeToken(ctx context.Context, id int64, at time.Time) error {
	return q.execOne(ctx, `UPDATE tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?`, ms(at), id)
}

// touchTokenQuery records a token's last use, and nothing else: the cache drops the
// token's entry rather than counting a change of tokens (touched).
const touchTokenQuery = `UPDATE tokens SET last_used_at = ? WHERE id = ?`

func (q queries) TouchToken(ctx context.Context, id int64, at time.Time) error {
	if err := q.execOne(ctx, touchTokenQuery, ms(at), id); err != nil {
		return err
	}
	touched(q.q, id)
	return nil
}

func orNotFound(err error) error {
	if err != nil {
		return err
	}
	return store.ErrNotFound
}
