package sqlstore

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/berthhq/berth/internal/compute"
)

//go:embed migrations/postgres/*.sql
var postgresMigrations embed.FS

// OpenPostgres opens the PostgreSQL database at url (postgres://...). Several berthd
// processes may open one database: every write transaction is PostgreSQL's, rows a
// rule depends on are locked (LockAccount, a metering step), and what a process
// answers from memory is checked against the database's change counters first
// (cache_postgres.go). The database holds the tables of drivers too.
func OpenPostgres(ctx context.Context, rawURL string, drivers ...compute.Storage) (*DB, error) {
	cfg, err := pgx.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("database URL %s: %w", Redact(rawURL), err)
	}
	// Berth's own writes are counted in the transaction; this tells the tables'
	// triggers that they need not notify them (ForeignWriteChannel).
	cfg.RuntimeParams[foreignWriteParam] = "on"
	pool := stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(func(_ context.Context, c *pgx.Conn) error {
		flagsAsIntegers(c.TypeMap())
		return nil
	}))
	pool.SetMaxOpenConns(40)
	pool.SetMaxIdleConns(20)
	pool.SetConnMaxIdleTime(5 * time.Minute)
	db := &DB{queries: on(dialectPostgres, pool), d: dialectPostgres, write: pool, read: pool, path: Redact(rawURL),
		drivers: drivers, stmts: map[string]*sql.Stmt{}}
	db.cache = newPostgresCache(db)
	if err := db.ping(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// Redact is a database URL fit for a log line, an error or a help text: without its
// password, in whichever form the password came (docs/SECURITY.md): in the user part
// (postgres://user:password@host), as a query parameter (?password=, ?sslpassword=),
// or in PostgreSQL's keyword form (host=... password=...), which Berth refuses but
// names in the error. Anything before an @ of a string that is no scheme://... URL
// is taken for a password too.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(a database URL that does not parse)"
	}
	if u.Scheme == "" || u.Opaque != "" {
		s := rawURL
		if i := strings.LastIndex(s, "@"); i >= 0 {
			s = "xxxxx" + s[i:]
		}
		return keywordPassword.ReplaceAllString(s, "${1}xxxxx")
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
	}
	q := u.Query()
	redacted := false
	for _, k := range []string{"password", "sslpassword"} {
		if q.Has(k) {
			q.Set(k, "xxxxx")
			redacted = true
		}
	}
	if redacted {
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// keywordPassword is a password in PostgreSQL's keyword form: password=secret,
// password = 'a secret', sslpassword=...
var keywordPassword = regexp.MustCompile(`(?i)((?:^|[\s&?])(?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'?|[^\s&]*)`)

// IsPostgresURL reports whether s names a PostgreSQL database.
func IsPostgresURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// Postgres reports whether db is a PostgreSQL database.
func (db *DB) Postgres() bool { return db.d == dialectPostgres }

// advisoryLock takes PostgreSQL's session advisory lock named name on a connection of
// its own, waiting for it, and returns what releases it.
func (db *DB) advisoryLock(ctx context.Context, name string) (unlock func(), err error) {
	conn, err := db.write.Conn(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(hashtext($1))`, name); err != nil {
		conn.Close()
		return nil, err
	}
	return func() {
		_, _ = conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock(hashtext($1))`, name)
		conn.Close()
	}, nil
}

// SchemaVersion is the version of the store's line of Berth's schema the database
// has (0: none).
func (db *DB) SchemaVersion(ctx context.Context) (int64, error) {
	lines, err := db.lines()
	if err != nil {
		return 0, err
	}
	p, err := db.provider(lines[0], db.write)
	if err != nil {
		return 0, err
	}
	return p.GetDBVersion(ctx)
}

// flagsAsIntegers lets a Go bool be written to an integer column as 0 or 1, as SQLite
// takes it: Berth's flags are 0/1 integers on both databases. A bool written to a
// boolean column (River's tables) is encoded as before; only where no plan exists
// does pgx ask this wrapper.
func flagsAsIntegers(m *pgtype.Map) {
	m.TryWrapEncodePlanFuncs = append([]pgtype.TryWrapEncodePlanFunc{func(v any) (pgtype.WrappedEncodePlanNextSetter, any, bool) {
		if b, ok := v.(bool); ok {
			return &boolAsInt{}, int64(b2i(b)), true
		}
		return nil, nil, false
	}}, m.TryWrapEncodePlanFuncs...)
}

type boolAsInt struct{ next pgtype.EncodePlan }

func (p *boolAsInt) SetNext(next pgtype.EncodePlan) { p.next = next }

func (p *boolAsInt) Encode(v any, buf []byte) ([]byte, error) {
	return p.next.Encode(int64(b2i(v.(bool))), buf)
}
