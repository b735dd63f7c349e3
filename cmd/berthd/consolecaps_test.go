package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/testnet"
)

// TestServeConsoleCaps: --console-sessions-per-server caps a server's open serial
// consoles over every berthd on the database (issue 26). The consoles of a berthd
// killed with SIGKILL hold their places until their lease runs out, and no longer;
// those of one stopped with SIGTERM are told so (1001) and free their places at once.
// On SQLite the second berthd is the first one started again; on PostgreSQL it also
// serves beside it.
func TestServeConsoleCaps(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--console-sessions-per-server", "0"}, "--console-sessions-per-server"},
		{[]string{"--console-sessions-per-account", "-1"}, "--console-sessions-per-account"},
		{[]string{"--console-lease", "10ms"}, "--console-lease"},
	} {
		cmd := exec.Command(bin, append([]string{"serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0"}, tc.args...)...)
		out, err := cmd.Output()
		var res struct{ Error string }
		_ = json.Unmarshal(out, &res)
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(res.Error, tc.want) {
			t.Errorf("serve %v: %v, %s; want exit 1 with an error mentioning %s", tc.args, err, out, tc.want)
		}
	}

	data := t.TempDir()
	runJSON(t, bin, append([]string{"migrate"}, storeFlags(t, data)...)...)
	acct := runJSON(t, bin, append([]string{"admin", "account", "create", "--email", "con@example.com", "--password", "long-enough-pw",
		"--credit", "50"}, storeFlags(t, data)...)...)
	token := runJSON(t, bin, append([]string{"admin", "token", "create", "--account", fmt.Sprint(acct["id"]), "--name", "c",
		"--scopes", "servers,power"}, storeFlags(t, data)...)...)["token"].(string)
	const lease = 15 * time.Second
	caps := func(lease time.Duration) []string {
		return []string{"--console-sessions-per-server", "2", "--console-lease", lease.String()}
	}
	a := startServe(t, bin, data, testnet.FreeAddr(t), "0.01", caps(lease)...)
	code, m := a.call(t, token, "POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1})
	if code != 201 {
		t.Fatalf("order: %d %v", code, m)
	}
	srv := m["data"].(map[string]any)
	name := srv["name"].(string)
	a.waitOp(t, token, srv["operation"].(map[string]any)["id"].(float64), 60*time.Second)

	// open opens a console through d; its channel gets the error that ends it.
	open := func(d *daemon) <-chan error {
		t.Helper()
		code, m := d.call(t, token, "POST", "/servers/"+name+"/console", nil)
		if code != 201 {
			t.Fatalf("console ticket: %d %v", code, m)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		ws, _, err := websocket.Dial(ctx, m["data"].(map[string]any)["url"].(string), nil)
		if err != nil {
			t.Fatalf("console: %v", err)
		}
		t.Cleanup(func() { ws.CloseNow() })
		ended := make(chan error, 1)
		go func() {
			for {
				if _, _, err := ws.Read(context.Background()); err != nil {
					ended <- err
					return
				}
			}
		}()
		return ended
	}
	full := func(d *daemon, when string) {
		t.Helper()
		code, m := d.call(t, token, "POST", "/servers/"+name+"/console", nil)
		if code != 409 || m["code"] != "busy" || !strings.Contains(fmt.Sprint(m["message"]), "2 console sessions") {
			t.Fatalf("%s: a third console ticket answered %d %v, want 409 busy naming the cap of 2", when, code, m)
		}
	}

	open(a)
	open(a)
	full(a, "two open")
	var b *daemon
	if testenv.Postgres() {
		b = startServe(t, bin, data, testnet.FreeAddr(t), "0.01", caps(time.Minute)...)
		full(b, "two open through the other process")
	}

	// SIGKILL: the places stay taken until the lease runs out.
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = a.cmd.Wait()
	killed := time.Now()
	if b == nil {
		b = startServe(t, bin, data, testnet.FreeAddr(t), "0.01", caps(time.Minute)...)
	}
	full(b, "just after the holder was killed")
	// The two sessions' leases end apart (each from when it opened, if the killed
	// berthd had not renewed them yet), and a ticket reserves nothing: wait for a
	// free place before each console, so the first one opened in the gap between the
	// leases does not leave the second without.
	free := func() {
		t.Helper()
		for {
			code, m := b.call(t, token, "POST", "/servers/"+name+"/console", nil)
			if code == 201 {
				return
			}
			if code != 409 {
				t.Fatalf("console ticket: %d %v", code, m)
			}
			if time.Since(killed) > lease+5*time.Second {
				t.Fatalf("the places of a killed berthd still taken %v after, with a lease of %v", time.Since(killed), lease)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	var ended []<-chan error
	for range 2 {
		free()
		ended = append(ended, open(b))
	}
	t.Logf("the places of the killed berthd freed %v after its death (lease %v)", time.Since(killed).Round(time.Millisecond), lease)

	// SIGTERM: the consoles are told, and their places are free at once (b's lease
	// is a minute).
	full(b, "two open again")
	if err := b.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	for _, end := range ended {
		select {
		case err := <-end:
			var ce websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != websocket.StatusGoingAway {
				t.Errorf("a console of the stopping berthd ended with %v, want 1001", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("a console of the stopping berthd still open after 30 s")
		}
	}
	_ = b.cmd.Wait()
	c := startServe(t, bin, data, testnet.FreeAddr(t), "0.01", caps(time.Minute)...)
	open(c)
	open(c)
	full(c, "after a stop")
}
