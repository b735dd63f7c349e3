package main

import (
	"database/sql"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"github.com/berthhq/berth/internal/testenv"
)

// The tests that run berthd on a data directory run it on PostgreSQL instead when
// BERTH_TEST_STORE=postgres (the README's test command does that in its second pass):
// each data directory then stands for a database of its own (testenv.PostgresFor).

// storeFlags are the flags that point berthd at the store of data.
func storeFlags(t *testing.T, data string) []string {
	t.Helper()
	if !testenv.Postgres() {
		return []string{"--data", data}
	}
	return []string{"--database", testenv.PostgresFor(t, data)}
}

// serveStoreFlags are the store flags of a test's serve. On PostgreSQL a killed
// process's jobs are taken over by the next one once the sweep finds its liveness
// lock free (internal/app/liveness.go), as fast as SQLite's restart resumes them.
func serveStoreFlags(t *testing.T, data string) []string { return storeFlags(t, data) }

// storeDB opens the store of data to read what berthd left (or, on SQLite, is still
// writing: it waits up to 10 s for a lock), and returns a function
// that writes a query's JSON field of an integer in its dialect.
func storeDB(t *testing.T, data string) (db *sql.DB, jsonInt func(col, field string) string, rebind func(string) string) {
	t.Helper()
	var err error
	if testenv.Postgres() {
		db, err = sql.Open("pgx", storeFlags(t, data)[1])
		jsonInt = func(col, field string) string { return "(" + col + "->>'" + field + "')::bigint" }
		rebind = func(q string) string {
			n := 0
			var b strings.Builder
			for _, c := range q {
				if c == '?' {
					n++
					b.WriteString("$" + strconv.Itoa(n))
					continue
				}
				b.WriteRune(c)
			}
			return b.String()
		}
	} else {
		db, err = sql.Open("sqlite", "file:"+filepath.Join(data, "berth.db")+"?mode=ro&_pragma=busy_timeout(10000)")
		jsonInt = func(col, field string) string { return "json_extract(" + col + ", '$." + field + "')" }
		rebind = func(q string) string { return q }
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, jsonInt, rebind
}
