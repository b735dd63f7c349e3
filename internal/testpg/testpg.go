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
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/berthhq/berth/internal/testnet"
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

// Server is a PostgreSQL server of a test's own, which the test may stop and start
// (what a database outage does to Berth).
type Server struct {
	// URL is its postgres database's URL.
	URL string
	bin string
	dir string
	as  []string
	t   testing.TB
}

// NewServer starts a PostgreSQL server for t alone, on a free port, stopped when t
// ends. It needs PostgreSQL's server binaries (Debian: postgresql); without them the
// test skips, or fails under BERTH_POSTGRES_REQUIRED=1.
func NewServer(t testing.TB) *Server {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(bins) == 0 {
		msg := "PostgreSQL server binaries are missing (apt-get install postgresql)"
		if os.Getenv(EnvRequired) == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	sort.Strings(bins)
	s := &Server{bin: filepath.Dir(bins[len(bins)-1]), dir: t.TempDir(), t: t}
	if os.Geteuid() == 0 {
		// PostgreSQL refuses to run as root.
		s.as = []string{"runuser", "-u", "postgres", "--"}
		if err := exec.Command("chown", "-R", "postgres", s.dir).Run(); err != nil {
			t.Fatalf("chown %s: %v", s.dir, err)
		}
		if err := os.Chmod(filepath.Dir(s.dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	port := testnet.FreePort(t)
	s.run("initdb", "-D", filepath.Join(s.dir, "data"), "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8")
	conf := fmt.Sprintf("\nport = %d\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\nfsync = off\n", port, s.dir)
	f, err := os.OpenFile(filepath.Join(s.dir, "data", "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString(conf)
	f.Close()
	s.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	s.Start()
	t.Cleanup(func() { _ = s.pgctl("stop", "-m", "immediate") })
	return s
}

func (s *Server) run(name string, args ...string) {
	s.t.Helper()
	cmd := append(slices.Clone(s.as), append([]string{filepath.Join(s.bin, name)}, args...)...)
	if out, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput(); err != nil {
		s.t.Fatalf("%s: %v\n%s", name, err, out)
	}
}

func (s *Server) pgctl(args ...string) error {
	cmd := append(slices.Clone(s.as), append([]string{filepath.Join(s.bin, "pg_ctl"), "-D", filepath.Join(s.dir, "data"),
		"-l", filepath.Join(s.dir, "log"), "-w", "-t", "60"}, args...)...)
	out, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_ctl %v: %v\n%s", args, err, out)
	}
	return nil
}

// Start starts the server (again).
func (s *Server) Start() {
	s.t.Helper()
	if err := s.pgctl("start"); err != nil {
		s.t.Fatal(err)
	}
}

// Stop stops the server at once, as a crash or an outage would.
func (s *Server) Stop() {
	s.t.Helper()
	if err := s.pgctl("stop", "-m", "immediate"); err != nil {
		s.t.Fatal(err)
	}
}
