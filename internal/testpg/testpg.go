// Package testpg gives tests PostgreSQL databases of their own (test tier 3).
//
// Tests find the server through BERTH_TEST_DATABASE_URL (scripts/pg-test-server.sh
// starts one and prints it). Each test gets a new, empty database on that server,
// dropped when the test ends. Without the variable the tests skip, loudly; with
// BERTH_POSTGRES_REQUIRED=1 (CI) they fail instead.
package testpg

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// EnvURL names the variable that points tests at a PostgreSQL server.
const EnvURL = "BERTH_TEST_DATABASE_URL"

// EnvRequired names the variable that makes a missing server a failure.
const EnvRequired = "BERTH_POSTGRES_REQUIRED"

var warnOnce sync.Once

// Available reports whether a PostgreSQL server is configured for tests.
func Available() bool { return os.Getenv(EnvURL) != "" }

// Require skips t (or fails it, under BERTH_POSTGRES_REQUIRED=1) when no PostgreSQL
// server is configured, and returns the server's URL.
func Require(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u != "" {
		return u
	}
	msg := "PostgreSQL tests (tier 3) SKIPPED: " + EnvURL + " is not set; start a server with " +
		`eval "$(scripts/pg-test-server.sh)"`
	if os.Getenv(EnvRequired) == "1" {
		t.Fatal(msg + " (" + EnvRequired + "=1: they must run)")
	}
	warnOnce.Do(func() { fmt.Fprintln(os.Stderr, "\n*** "+msg+" ***\n") })
	t.Skip(msg)
	return ""
}

// NewDatabase creates an empty database for t on the configured server and returns
// its URL; it is dropped when t ends.
func NewDatabase(t testing.TB) string {
	t.Helper()
	server := Require(t)
	u, err := url.Parse(server)
	if err != nil {
		t.Fatalf("%s: %v", EnvURL, err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "berth_t_" + hex.EncodeToString(b)
	admin, err := sql.Open("pgx", server)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := admin.ExecContext(ctx, `CREATE DATABASE `+name); err != nil {
		admin.Close()
		t.Fatalf("create test database on %s: %v", u.Host, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := admin.ExecContext(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`); err != nil {
			t.Logf("drop test database %s: %v", name, err)
		}
		admin.Close()
	})
	u.Path = "/" + name
	return u.String()
}
