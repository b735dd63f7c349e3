package main

import (
	"context"
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
	"syscall"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, to make PowerDNS's database

	"github.com/berthhq/berth/internal/nameserver"
	"github.com/berthhq/berth/internal/nameserver/powerdns"
)

// schemaFiles are where Debian's pdns-backend-sqlite3 puts the gsqlite3 schema, as
// internal/nameserver/powerdns/powerdnstest looks for it.
var schemaFiles = []string{
	"/usr/share/pdns-backend-sqlite3/schema/schema.sqlite3.sql",
	"/usr/share/doc/pdns-backend-sqlite3/schema.sqlite3.sql",
}

// pdns is a running pdns_server.
type pdns struct {
	cmd     *exec.Cmd
	api     string // http://127.0.0.1:port
	key     string
	dnsAddr string
	logPath string
	exited  chan struct{}
}

// startPDNS starts pdns_server in dir on a new gsqlite3 database, its DNS on dnsAddr
// and its API on apiAddr. Unlike the tests' server (powerdnstest) it runs with
// PowerDNS's default threads and caches, as an operator would run it: the packet
// cache and the query cache on, 1 receiver thread, 3 distributor threads.
func startPDNS(ctx context.Context, dir, dnsAddr, apiAddr string) (*pdns, error) {
	bin, err := exec.LookPath("pdns_server")
	if err != nil {
		bin = "/usr/sbin/pdns_server"
		if _, err := os.Stat(bin); err != nil {
			return nil, errors.New("no pdns_server: apt-get install -y pdns-server pdns-backend-sqlite3")
		}
	}
	db := filepath.Join(dir, "pdns.sqlite3")
	if err := makePDNSDatabase(db); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "pdns.conf"), nil, 0o600); err != nil {
		return nil, err
	}
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	p := &pdns{api: "http://" + apiAddr, key: hex.EncodeToString(key), dnsAddr: dnsAddr,
		logPath: filepath.Join(dir, "pdns.log"), exited: make(chan struct{})}
	dnsHost, dnsPort, _ := strings.Cut(dnsAddr, ":")
	webHost, webPort, _ := strings.Cut(apiAddr, ":")
	args := []string{
		"--config-dir=" + dir, "--socket-dir=" + dir,
		"--daemon=no", "--guardian=no", "--disable-syslog", "--write-pid=no",
		"--security-poll-suffix=", "--launch=gsqlite3", "--gsqlite3-database=" + db,
		"--local-address=" + dnsHost, "--local-port=" + dnsPort,
		"--api=yes", "--api-key=" + p.key,
		"--webserver=yes", "--webserver-address=" + webHost, "--webserver-port=" + webPort,
		"--webserver-allow-from=127.0.0.1",
	}
	lf, err := os.Create(p.logPath)
	if err != nil {
		return nil, err
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = lf, lf
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("starting pdns_server: %w", err)
	}
	go func() { _ = p.cmd.Wait(); lf.Close(); close(p.exited) }()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-p.exited:
			return nil, fmt.Errorf("pdns_server exited at start:\n%s", p.log())
		default:
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.api+"/api/v1/servers/localhost", nil)
		req.Header.Set("X-API-Key", p.key)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.stop()
	return nil, fmt.Errorf("pdns_server's API did not answer within 30 s:\n%s", p.log())
}

// publish makes PowerDNS serve zones through Berth's PowerDNS driver.
func (p *pdns) publish(ctx context.Context, zones []nameserver.Zone) error {
	c, err := powerdns.New(powerdns.Options{URL: p.api, APIKey: p.key})
	if err != nil {
		return err
	}
	for _, z := range zones {
		if err := c.Publish(ctx, z); err != nil {
			return fmt.Errorf("publishing %s to PowerDNS: %w", z.Name, err)
		}
	}
	return nil
}

func (p *pdns) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

func (p *pdns) log() string {
	b, _ := os.ReadFile(p.logPath)
	return string(b)
}

// makePDNSDatabase creates the gsqlite3 database at path from the packaged schema.
func makePDNSDatabase(path string) error {
	var schema []byte
	var err error
	for _, f := range schemaFiles {
		if schema, err = os.ReadFile(f); err == nil {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("the gsqlite3 schema of pdns-backend-sqlite3 (%s): %w; apt-get install -y pdns-backend-sqlite3",
			strings.Join(schemaFiles, ", "), err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Exec(string(schema)); err != nil {
		return fmt.Errorf("creating PowerDNS's database: %w", err)
	}
	return nil
}
