package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/berthhq/berth/client"
	"github.com/berthhq/berth/internal/hosting"
)

// Issue 26 added two more kinds of load to the fault test, both about limits that
// must hold whatever the kills cut:
//
//   - Test clocks (SQLite only: serve refuses --sandbox on PostgreSQL). Two accounts
//     advance their sandbox clocks side by side for the whole run, a year at a time,
//     then in halving steps once refused, until they sit at the 100-year limit and
//     every advance is refused (422 on advance). No clock may ever read earlier than
//     it did, nor more than 100 years ahead; at the end each sits at the limit.
//   - Console floods. Every faultFloodEvery-th round, just before the kill, ten
//     consoles are asked for at once on one server: at most four may open (the cap
//     per server), every other one is refused with 409 busy, never another answer.
//     The daemon runs with a short console lease, so that a killed process's
//     consoles free their places before the next flood.

const (
	faultFloodEvery = 4 // rounds 3, 7, ...: not the bursts' (2, 6, ...) nor the scheduled deletions' (4, 8, ...)
	faultFloodSize  = 10
	// faultConsoleLease is the daemon's --console-lease: a killed process's consoles
	// hold their places this long.
	faultConsoleLease = "1s"
)

// clockRunner advances one account's sandbox clock for the whole workload.
type clockRunner struct {
	base, token string
	http        *http.Client
	step        time.Duration
	last        time.Time // the latest time the clock was seen at
	moved       int
	refused     int
	problems    []string
}

func newClockRunner(sandboxBase, token string) *clockRunner {
	return &clockRunner{base: sandboxBase, token: token, step: 8760 * time.Hour,
		http: &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}}
}

func (c *clockRunner) call(method, path string, body any) (int, map[string]any, error) {
	fc := faultClient{token: c.token, base: c.base, http: c.http}
	return fc.call(method, path, body)
}

// see checks a reading of the clock against every earlier one and the limit.
func (c *clockRunner) see(m map[string]any, what string) {
	data, _ := m["data"].(map[string]any)
	s, _ := data["now"].(string)
	now, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		c.problems = append(c.problems, fmt.Sprintf("%s: no time in %v", what, m))
		return
	}
	if now.Before(c.last) {
		c.problems = append(c.problems, fmt.Sprintf("%s: the clock went back from %s to %s", what, c.last, now))
	}
	if limit := time.Now().Add(hosting.MaxClockAhead + time.Minute); now.After(limit) {
		c.problems = append(c.problems, fmt.Sprintf("%s: the clock reads %s, more than 100 years ahead", what, now))
	}
	if now.After(c.last) {
		c.last = now
	}
}

// advance asks for one advance of c.step and checks the answer. It reports whether
// the daemon answered.
func (c *clockRunner) advance() bool {
	code, m, err := c.call("POST", "/clock", map[string]any{"advance": c.step.String()})
	switch {
	case err != nil:
		return false // the daemon is down, or its answer was lost: the next reading tells
	case code == 200:
		c.moved++
		c.see(m, "advance "+c.step.String())
	case code == 422:
		c.refused++
		errs, _ := m["errors"].(map[string]any)
		if m["code"] != "validation_failed" || errs["advance"] == nil || len(errs) != 1 {
			c.problems = append(c.problems, fmt.Sprintf("advance %s refused without an error on advance alone: %v", c.step, m))
		}
		if c.step > time.Millisecond {
			c.step = max((c.step / 2).Truncate(time.Millisecond), time.Millisecond)
		}
	case code == 503:
		// The disk-full rounds: nothing was done.
	default:
		c.problems = append(c.problems, fmt.Sprintf("advance %s answered %d: %v", c.step, code, m))
	}
	return true
}

func (c *clockRunner) run(stop *atomic.Bool, done func()) {
	defer done()
	for !stop.Load() {
		if !c.advance() {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if code, m, err := c.call("GET", "/clock", nil); err == nil && code == 200 {
			c.see(m, "reading")
		}
		if c.step == time.Millisecond {
			time.Sleep(20 * time.Millisecond) // at the limit: a refusal now and then is enough
		}
	}
}

// finish checks, with the daemon settled, that the clock sits at the limit and
// refuses the smallest advance.
func (c *clockRunner) finish() []string {
	code, m, err := c.call("GET", "/clock", nil)
	if err != nil || code != 200 {
		return append(c.problems, fmt.Sprintf("reading the clock at the end: %d %v %v", code, m, err))
	}
	c.see(m, "the end")
	if ahead := time.Until(c.last); ahead < hosting.MaxClockAhead-time.Minute {
		c.problems = append(c.problems, fmt.Sprintf("after %d advances (%d refused) the clock is %s ahead, short of the 100-year limit",
			c.moved, c.refused, ahead.Round(time.Hour)))
	}
	if code, m, err := c.call("POST", "/clock", map[string]any{"advance": "1ms"}); err != nil || code != 422 {
		c.problems = append(c.problems, fmt.Sprintf("an advance of 1ms at the limit answered %d %v %v, want 422", code, m, err))
	}
	return c.problems
}

// consoleFlood asks for faultFloodSize consoles of one server at once and keeps the
// ones that open until close is called (after the kill).
type consoleFlood struct {
	opened, refused, lost int
	problems              []string
	conns                 []*client.ServerConsole
}

func floodConsoles(c *client.Client, server int64) *consoleFlood {
	f := &consoleFlood{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	ctx := context.Background()
	for range faultFloodSize {
		wg.Go(func() {
			conn, err := openConsole(ctx, c, server)
			mu.Lock()
			defer mu.Unlock()
			var ce *client.Error
			switch {
			case err == nil:
				f.opened++
				f.conns = append(f.conns, conn)
			case errors.Is(err, client.ErrBusy):
				f.refused++
			case errors.As(err, &ce):
				f.problems = append(f.problems, fmt.Sprintf("a console of server %d refused with %d %s: %s", server, ce.StatusCode, ce.Code, ce.Message))
			default:
				f.lost++ // no answer: the daemon went down
			}
		})
	}
	wg.Wait()
	if f.opened > 4 {
		f.problems = append(f.problems, fmt.Sprintf("%d consoles of server %d open at once; the cap is 4", f.opened, server))
	}
	return f
}

func openConsole(ctx context.Context, c *client.Client, server int64) (*client.ServerConsole, error) {
	ticket, err := c.RequestServerConsole(ctx, fmt.Sprint(server))
	if err != nil {
		return nil, err
	}
	return c.ConnectServerConsole(ctx, ticket.URL)
}

func (f *consoleFlood) close() {
	for _, c := range f.conns {
		c.Close()
	}
}
