package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/testnet"
)

// selfSigned writes a certificate and key for 127.0.0.1 and returns their files and
// a pool that trusts the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "berth test"},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// TestServeTLS: with --tls-cert/--tls-key berthd speaks HTTP/2 over TLS and sends the
// API's security headers, HSTS included.
func TestServeTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	certFile, keyFile, pool := selfSigned(t)
	addr := testnet.FreeAddr(t)
	cmd := exec.Command(bin, "serve", "--data", t.TempDir(), "--addr", addr, "--tls-cert", certFile, "--tls-key", keyFile)
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	var resp *http.Response
	deadline := time.Now().Add(20 * time.Second)
	for {
		var err error
		if resp, err = client.Get("https://" + addr + "/v1/me"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no TLS answer: %v\n%s", err, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.ProtoMajor != 2 || resp.TLS == nil {
		t.Errorf("GET /v1/me over TLS: %d %s", resp.StatusCode, resp.Proto)
	}
	for h, want := range map[string]string{
		"Strict-Transport-Security": "max-age=63072000; includeSubDomains",
		"X-Content-Type-Options":    "nosniff",
		"X-Frame-Options":           "DENY",
		"Content-Security-Policy":   "default-src 'none'; frame-ancestors 'none'",
		"Referrer-Policy":           "no-referrer",
		"Cache-Control":             "no-store",
	} {
		if got := resp.Header.Get(h); got != want {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}
	// The console's answers carry HSTS too: pages, redirects, static files, errors.
	noFollow := *client
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for _, path := range []string{"/signin", "/", "/servers", "/static/console.css", "/static/nothing.js", "/no-such-page"} {
		r, err := noFollow.Get("https://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if got := r.Header.Get("Strict-Transport-Security"); got != "max-age=63072000; includeSubDomains" {
			t.Errorf("GET %s over TLS (%d): Strict-Transport-Security %q", path, r.StatusCode, got)
		}
	}
	// Old TLS is refused.
	old := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, MaxVersion: tls.VersionTLS11}}}
	if r, err := old.Get("https://" + addr + "/v1/me"); err == nil {
		r.Body.Close()
		t.Errorf("a TLS 1.1 client was served")
	}
}

// TestServeRefusesPlainHTTP: plain HTTP is served only on loopback unless explicitly
// allowed, and the TLS flags go together.
func TestServeRefusesPlainHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--addr", "0.0.0.0:0"}, "refusing plain HTTP"},
		{[]string{"--addr", "[::]:0"}, "refusing plain HTTP"},
		{[]string{"--addr", "127.0.0.1:0", "--tls-cert", "cert.pem"}, "go together"},
	} {
		cmd := exec.Command(bin, append([]string{"serve", "--data", t.TempDir()}, tc.args...)...)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("serve %v: %v, %s; want a refusal mentioning %q", tc.args, err, out, tc.want)
		}
	}
	// Explicitly allowed (behind a TLS-terminating proxy): it serves.
	port := strings.TrimPrefix(testnet.FreeAddr(t), "127.0.0.1:")
	cmd := exec.Command(bin, "serve", "--data", t.TempDir(), "--addr", "0.0.0.0:"+port, "--allow-insecure-http")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get("http://127.0.0.1:" + port + "/v1/openapi.json")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("--allow-insecure-http did not serve: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestGracefulShutdown: SIGTERM finishes the requests in flight — a long ?wait answers
// at once with the operation as it stands — exits 0, and the operation resumes and
// completes at the next start.
func TestGracefulShutdown(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	data := t.TempDir()
	store := storeFlags(t, data)
	runJSON(t, bin, append([]string{"migrate"}, store...)...)
	runJSON(t, bin, append([]string{"admin", "account", "create", "--email", "g@example.com", "--password", "correct-horse", "--credit", "10"}, store...)...)
	token := runJSON(t, bin, append([]string{"admin", "token", "create", "--account", "1", "--name", "t", "--scopes", "servers"}, store...)...)["token"].(string)
	addr := testnet.FreeAddr(t)
	d := startServe(t, bin, data, addr, "0.3") // provisioning takes 9 s
	code, m := d.call(t, token, "POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1})
	if code != http.StatusCreated {
		t.Fatalf("order: %d %v", code, m)
	}
	srv := m["data"].(map[string]any)
	op := srv["operation"].(map[string]any)["id"].(float64)

	type answer struct {
		code int
		body map[string]any
		err  error
		took time.Duration
	}
	waited := make(chan answer, 1)
	go func() {
		start := time.Now()
		req, _ := http.NewRequest("GET", fmt.Sprintf("%s/operations/%d?wait=60", d.base, int64(op)), nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		a := answer{err: err, took: time.Since(start)}
		if err == nil {
			a.code = resp.StatusCode
			_ = json.NewDecoder(resp.Body).Decode(&a.body)
			resp.Body.Close()
			a.took = time.Since(start)
		}
		waited <- a
	}()
	time.Sleep(500 * time.Millisecond) // the wait is held
	before := len(d.log.String())
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	a := <-waited
	if a.err != nil || a.code != http.StatusOK || a.took > 10*time.Second {
		t.Fatalf("the request in flight at SIGTERM: %d %v %v after %s", a.code, a.body, a.err, a.took)
	}
	if st := a.body["data"].(map[string]any)["status"]; st != "running" {
		t.Errorf("operation answered at shutdown: %v", a.body)
	}
	exited := make(chan error, 1)
	go func() { exited <- d.cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("berthd exited with %v after SIGTERM\n%s", err, d.log)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("berthd still running 20 s after SIGTERM\n%s", d.log)
	}
	if !strings.Contains(d.log.String(), `"msg":"stopped"`) {
		t.Errorf("no orderly stop in the log:\n%s", d.log)
	}
	// An operation a stop interrupts is no alarm (issue 33): its job resumes at the
	// next start, and the log says so at INFO.
	for _, line := range strings.Split(d.log.String()[before:], "\n") {
		if strings.Contains(line, `"level":"WARN"`) || strings.Contains(line, `"level":"ERROR"`) {
			t.Errorf("a stop with an operation in flight logged %s", line)
		}
	}
	if !strings.Contains(d.log.String(), `"msg":"operation interrupted by the stop; the next start resumes it"`) {
		t.Errorf("no line says the interrupted operation resumes:\n%s", d.log)
	}
	// The next start resumes the provisioning and completes it.
	d2 := startServe(t, bin, data, addr, "0.01")
	if got := d2.waitOp(t, token, op, 60*time.Second); got["status"] != "success" {
		t.Errorf("resumed operation: %v", got)
	}
	if s := d2.server(t, token, srv["name"].(string)); s["status"] != "running" {
		t.Errorf("server after the resumed provisioning: %v", s)
	}
}
