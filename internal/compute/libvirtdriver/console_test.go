package libvirtdriver_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/berthhq/berth/internal/catalog"
	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/compute/computetest"
	"github.com/berthhq/berth/internal/compute/libvirtdriver"
	"github.com/berthhq/berth/internal/compute/libvirtdriver/libvirttest"
	"github.com/berthhq/berth/internal/store/sqlstore/sqlstoretest"
	"github.com/berthhq/berth/internal/testenv"
)

// TestConsoleConformance runs the shared console suite on a real guest: its console
// shows the boot, echoes what is typed (the test image's shell), and ends when the
// guest is powered off. The bound on the boot is a cap for a broken guest, not an
// expectation: TCG on a loaded machine has taken 80 s.
func TestConsoleConformance(t *testing.T) {
	t.Parallel()
	e := libvirttest.Require(t)
	computetest.ExerciseConsole(t, computetest.ConsoleOptions{Ready: "BERTH-GUEST ready", Settle: 10 * time.Minute},
		func(t *testing.T) compute.Driver {
			db := sqlstoretest.SQLite(t, t.TempDir(), libvirtdriver.Storage())
			d := libvirtdriver.New(db.WriteDB(), nil, db.Rebind, libvirtdriver.Options{Prefix: e.Prefix + "con-", MaxMemoryMB: 256, Poll: 100 * time.Millisecond})
			libvirttest.Setup(t, e, d, "10.77.0.230", "10.77.0.234")
			return d
		})
}

// shiftedClock is the system clock moved forward by an offset that only grows: the
// service's view of time, for a ticket's expiry, while the guests run in real time.
type shiftedClock struct{ ahead atomic.Int64 }

func (c *shiftedClock) Now() time.Time          { return time.Now().Add(time.Duration(c.ahead.Load())) }
func (c *shiftedClock) Advance(d time.Duration) { c.ahead.Add(int64(d)) }

// TestServerConsoleThroughTheAPI: a real guest's serial console through the HTTP
// API. A ticket, a WebSocket client that reads the guest's boot lines, a command
// typed into the guest's shell and its answer; the ticket's second use, another
// account and an expired ticket are refused. The deadlines derive from the boot this
// run measures on the host's own console log.
func TestServerConsoleThroughTheAPI(t *testing.T) {
	t.Parallel()
	e := libvirttest.Require(t)
	ctx := context.Background()
	prefix := e.Prefix + "capi-"
	clock := &shiftedClock{}
	env := testenv.New(t, testenv.Options{Driver: "libvirt", RateLimit: 1_000_000, Clock: clock.Now,
		Libvirt: libvirtdriver.Options{Prefix: prefix, Poll: 100 * time.Millisecond}})
	c, err := catalog.Parse([]byte(testCatalog))
	if err != nil {
		t.Fatal(err)
	}
	if err := env.App.Service.ApplyCatalog(ctx, c); err != nil {
		t.Fatal(err)
	}
	libvirttest.Setup(t, e, env.App.LibvirtDriver(), "10.77.0.235", "10.77.0.239")

	acct := env.NewAccount("en", "100.00", "")
	start := time.Now()
	srv := acct.Do("POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1}).Want(t, 201).Map(t)["data"].(map[string]any)
	name := srv["name"].(string)
	log := console{t, libvirtdriver.ConsoleLog("/var/log/libvirt/qemu", prefix+name)}
	acct.WaitStatus(t, name, "running", 5*time.Minute)
	running := time.Since(start)

	ticket := func() string {
		t.Helper()
		return acct.Do("POST", "/servers/"+name+"/console", nil).Want(t, 201).Map(t)["data"].(map[string]any)["url"].(string)
	}
	dial := func(u string) (*websocket.Conn, *http.Response, error) {
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		return websocket.Dial(wctx, u, nil)
	}
	u := ticket()
	ws, _, err := dial(u)
	if err != nil {
		t.Fatalf("console: %v", err)
	}
	defer ws.CloseNow()
	attached := time.Since(start)
	nc := websocket.NetConn(ctx, ws, websocket.MessageBinary)
	out := computetest.Follow(nc)
	from, boots := 0, 1
	if strings.Contains(log.text(), "BERTH-GUEST ready") {
		// The guest was up before its console was attached (a slow API under load):
		// a reset boots it again with the console attached.
		t.Logf("the guest was ready %.1fs after the order, before its console was attached: resetting it", time.Since(start).Seconds())
		from, boots = len(out.Text()), 2
		acct.Do("POST", "/servers/"+name+"/power", map[string]any{"action": "reset"}).Want(t, 200)
	}

	// The host's console log says when the guest is up: the measure of this run.
	log.waitCount("BERTH-GUEST ready", boots, 10*time.Minute)
	booted := time.Since(start)
	slack := max(15*time.Second, booted/2)
	t.Logf("POST /servers → running %.1fs, console attached %.1fs, guest ready (console log) %.1fs; slack %.0fs",
		running.Seconds(), attached.Seconds(), booted.Seconds(), slack.Seconds())
	// The boot lines the guest printed while the console was attached come through it.
	at := out.Wait(t, from, "BERTH-SEED hostname="+name, slack)
	at = out.Wait(t, at, "BERTH-GUEST ready", slack)

	// A command typed into the guest's shell, and its answer.
	typed := time.Now()
	if _, err := io.WriteString(nc, "\recho berth-$((6*7))\r"); err != nil {
		t.Fatal(err)
	}
	at = out.Wait(t, at, "echo berth-$((6*7))", slack) // the terminal's echo
	out.Wait(t, at, "berth-42", slack)
	t.Logf("typed → answer %.2fs", time.Since(typed).Seconds())

	// The ticket's second use; another account; an expired ticket.
	if _, resp, err := dial(u); err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("second use of the ticket: %v, %v; want 401", resp, err)
	}
	other := env.NewAccount("en", "100.00", "")
	other.Do("POST", "/servers/"+name+"/console", nil).Want(t, http.StatusNotFound)
	expired := ticket()
	clock.Advance(61 * time.Second)
	if _, resp, err := dial(expired); err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("expired ticket: %v, %v; want 401", resp, err)
	}
}
