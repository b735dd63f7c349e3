// Package powerdnstest starts a throwaway PowerDNS Authoritative server for a test:
// pdns_server from Debian's pdns-server, in the foreground, on a gsqlite3 database
// in the test's temp dir made from the schema that pdns-backend-sqlite3 ships, its
// DNS and its HTTP API on free loopback ports. Without pdns_server the tests skip,
// loudly; with BERTH_POWERDNS_REQUIRED=1 (CI) they fail instead.
package powerdnstest

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, to make the database

	"github.com/berthhq/berth/internal/testnet"
)

// EnvRequired names the variable that makes a missing pdns_server a failure.
const EnvRequired = "BERTH_POWERDNS_REQUIRED"

// schemaFiles are where Debian's pdns-backend-sqlite3 puts the gsqlite3 schema
// (dpkg -L pdns-backend-sqlite3), the first that exists is used.
var schemaFiles = []string{
	"/usr/share/pdns-backend-sqlite3/schema/schema.sqlite3.sql",
	"/usr/share/doc/pdns-backend-sqlite3/schema.sqlite3.sql",
}

// Options change how the server runs.
type Options struct {
	// AllowAXFR are the addresses or CIDRs PowerDNS answers AXFR to (allow-axfr-ips);
	// none when empty.
	AllowAXFR []string
}

// Server is a running pdns_server.
type Server struct {
	// URL is the base of its HTTP API ("http://127.0.0.1:port"), APIKey its key.
	URL, APIKey string
	// DNSAddr is where it answers DNS over UDP and TCP ("127.0.0.1:port").
	DNSAddr string

	cmd      *exec.Cmd
	exited   chan struct{}
	logPath  string
	stopOnce *sync.Once

	bin, db string
	args    []string
}

var warnOnce sync.Once

// Binary is the path of pdns_server; it skips t (or fails it, under
// BERTH_POWERDNS_REQUIRED=1) when PowerDNS is not installed.
func Binary(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("pdns_server"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/pdns_server"); err == nil {
		return "/usr/sbin/pdns_server"
	}
	msg := "PowerDNS tests SKIPPED: no pdns_server; apt-get install pdns-server pdns-backend-sqlite3"
	if os.Getenv(EnvRequired) == "1" {
		t.Fatal(msg + " (" + EnvRequired + "=1: they must run)")
	}
	warnOnce.Do(func() { fmt.Fprintln(os.Stderr, "\n*** "+msg+" ***\n") })
	t.Skip(msg)
	return ""
}

// Start starts a pdns_server for t, waits until its API answers, and stops it when
// t ends; its log is shown when t failed.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "pdns.sqlite3")
	makeDatabase(t, db)
	if err := os.WriteFile(filepath.Join(dir, "pdns.conf"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s := &Server{
		URL:     "http://" + testnet.FreeAddr(t),
		APIKey:  randomKey(t),
		DNSAddr: testnet.FreeAddr(t),
		logPath: filepath.Join(dir, "pdns.log"),
		bin:     bin,
		db:      db,
	}
	s.args = s.flags(dir, db, o)
	t.Cleanup(func() {
		if s.cmd != nil {
			s.Stop()
		}
		if t.Failed() {
			t.Logf("pdns_server's log:\n%s", s.Log())
		}
	})
	// The free addresses were free when picked; another test's socket may take one
	// before pdns_server binds it (a DNS client's source port is any free one): then
	// pick others.
	for attempt := 1; ; attempt++ {
		err := s.startUp(t)
		if err == nil {
			return s
		}
		if !errors.Is(err, errAddrInUse) || attempt == 5 {
			t.Fatal(err)
		}
		s.Stop()
		s.URL, s.DNSAddr = "http://"+testnet.FreeAddr(t), testnet.FreeAddr(t)
		s.args = s.flags(dir, db, o)
	}
}

// errAddrInUse is a start that failed for an address another socket holds.
var errAddrInUse = errors.New("address already in use")

// startUp starts pdns_server and waits until its API answers the key.
func (s *Server) startUp(t testing.TB) error {
	t.Helper()
	mark := len(s.Log())
	s.start(t)
	err := s.waitAPI()
	if err != nil && strings.Contains(s.Log()[mark:], "Address already in use") {
		return fmt.Errorf("%w: %w", errAddrInUse, err)
	}
	return err
}

// args are pdns_server's flags: its config dir the temp dir (an empty pdns.conf, so
// nothing of /etc/powerdns is read), no security poll (no DNS queries out), and the
// caches as PowerDNS has them by default: the driver under test must flush them.
func (s *Server) flags(dir, db string, o Options) []string {
	dnsHost, dnsPort, _ := strings.Cut(s.DNSAddr, ":")
	webHost, webPort, _ := strings.Cut(strings.TrimPrefix(s.URL, "http://"), ":")
	return []string{
		"--config-dir=" + dir, "--socket-dir=" + dir,
		"--daemon=no", "--guardian=no", "--disable-syslog", "--write-pid=no",
		"--security-poll-suffix=", "--launch=gsqlite3", "--gsqlite3-database=" + db,
		"--local-address=" + dnsHost, "--local-port=" + dnsPort,
		"--api=yes", "--api-key=" + s.APIKey,
		"--webserver=yes", "--webserver-address=" + webHost, "--webserver-port=" + webPort,
		"--webserver-allow-from=127.0.0.1",
		"--disable-axfr=no", "--allow-axfr-ips=" + strings.Join(o.AllowAXFR, ","),
		"--receiver-threads=1", "--distributor-threads=1",
	}
}

func (s *Server) start(t testing.TB) {
	t.Helper()
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	s.exited, s.stopOnce = make(chan struct{}), &sync.Once{}
	s.cmd = exec.Command(s.bin, s.args...)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("starting pdns_server: %v", err)
	}
	go func() {
		_ = s.cmd.Wait()
		logf.Close()
		close(s.exited)
	}()
}

// waitAPI waits until the API answers the key, at most 30 s.
func (s *Server) waitAPI() error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			return fmt.Errorf("pdns_server exited at start:\n%s", s.Log())
		default:
		}
		if apiAnswers(s.URL, s.APIKey) {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("pdns_server's API did not answer within 30 s:\n%s", s.Log())
}

// Restart starts the server again after Stop (stopping it first if it runs), on the
// same addresses and key: with fresh, on an empty database, as a PowerDNS rebuilt
// after it lost its own.
func (s *Server) Restart(t testing.TB, fresh bool) {
	t.Helper()
	s.Stop()
	if fresh {
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			if err := os.Remove(s.db + suffix); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
		}
		makeDatabase(t, s.db)
	}
	// On the same addresses: another socket that took one meanwhile (a DNS client's
	// source port) lets it go within moments.
	for deadline := time.Now().Add(15 * time.Second); ; {
		err := s.startUp(t)
		if err == nil {
			return
		}
		if !errors.Is(err, errAddrInUse) || time.Now().After(deadline) {
			t.Fatal(err)
		}
		s.Stop()
		time.Sleep(250 * time.Millisecond)
	}
}

// Stop stops the server (SIGTERM, then SIGKILL after 10 s) and waits until it has
// exited. A test calls it to see PowerDNS gone; Start's cleanup calls it again.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	})
}

// Log is what pdns_server has written so far.
func (s *Server) Log() string {
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	return string(b)
}

// makeDatabase creates the gsqlite3 database at path from the packaged schema.
func makeDatabase(t testing.TB, path string) {
	t.Helper()
	var schema []byte
	var err error
	for _, f := range schemaFiles {
		if schema, err = os.ReadFile(f); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("the gsqlite3 schema of pdns-backend-sqlite3 (%s): %v", strings.Join(schemaFiles, ", "), err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(string(schema)); err != nil {
		t.Fatalf("creating the PowerDNS database: %v", err)
	}
}

func randomKey(t testing.TB) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// apiAnswers reports whether the API at base answers 200 to key.
func apiAnswers(base, key string) bool {
	req, err := http.NewRequest(http.MethodGet, base+"/api/v1/servers/localhost", nil)
	if err != nil {
		return false
	}
	req.Header.Set("X-API-Key", key)
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
