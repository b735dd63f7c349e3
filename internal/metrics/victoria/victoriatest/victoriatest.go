// Package victoriatest starts a throwaway VictoriaMetrics for a test: Debian's
// victoria-metrics binary, single-node, its data in the test's temp dir, on a free
// loopback port, killed when the test ends. Without the binary the tests skip,
// loudly; with BERTH_VICTORIAMETRICS_REQUIRED=1 (CI) they fail instead.
package victoriatest

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/testnet"
)

// EnvRequired names the variable that makes a missing victoria-metrics a failure.
const EnvRequired = "BERTH_VICTORIAMETRICS_REQUIRED"

// Retention is the throwaway server's -retentionPeriod: the 7 days Berth's charts
// show, and one more.
const Retention = "8d"

// Server is a running VictoriaMetrics.
type Server struct {
	// URL is its base, "http://127.0.0.1:port" (berthd serve --metrics-url).
	URL string

	cmd     *exec.Cmd
	exited  chan struct{}
	logPath string
	stop    sync.Once
}

var warnOnce sync.Once

// Binary is the path of victoria-metrics; it skips t (or fails it, under
// BERTH_VICTORIAMETRICS_REQUIRED=1) when it is not installed.
func Binary(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("victoria-metrics"); err == nil {
		return p
	}
	msg := "VictoriaMetrics tests SKIPPED: no victoria-metrics; apt-get install victoria-metrics"
	if os.Getenv(EnvRequired) == "1" {
		t.Fatal(msg + " (" + EnvRequired + "=1: they must run)")
	}
	warnOnce.Do(func() { fmt.Fprintln(os.Stderr, "\n*** "+msg+" ***\n") })
	t.Skip(msg)
	return ""
}

// Start starts a VictoriaMetrics for t, waits until /health answers, and stops it
// when t ends; its log is shown when t failed.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	addr := testnet.FreeAddr(t)
	s := &Server{URL: "http://" + addr, exited: make(chan struct{}), logPath: filepath.Join(dir, "victoria-metrics.log")}
	logf, err := os.Create(s.logPath)
	if err != nil {
		t.Fatal(err)
	}
	s.cmd = exec.Command(bin, "-storageDataPath", filepath.Join(dir, "data"), "-httpListenAddr", addr,
		"-retentionPeriod", Retention, "-loggerLevel", "WARN", "-memory.allowedPercent", "10")
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("starting victoria-metrics: %v", err)
	}
	go func() {
		_ = s.cmd.Wait()
		logf.Close()
		close(s.exited)
	}()
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			t.Logf("victoria-metrics' log:\n%s", s.Log())
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for !s.healthy() {
		select {
		case <-s.exited:
			t.Fatalf("victoria-metrics exited at start:\n%s", s.Log())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("victoria-metrics did not answer /health within 60 s:\n%s", s.Log())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return s
}

func (s *Server) healthy() bool {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(s.URL + "/health")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// Flush makes what was written searchable now (GET /internal/force_flush), not
// within the second VictoriaMetrics otherwise takes.
func (s *Server) Flush(t testing.TB) {
	t.Helper()
	resp, err := http.Get(s.URL + "/internal/force_flush")
	if err != nil {
		t.Fatalf("victoria-metrics force_flush: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("victoria-metrics force_flush: %s", resp.Status)
	}
}

// Stop stops the server (SIGTERM, then SIGKILL after 10 s) and waits until it has
// exited.
func (s *Server) Stop() {
	s.stop.Do(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	})
}

// Log is what victoria-metrics has written so far.
func (s *Server) Log() string {
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	return string(b)
}
