package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/berthhq/berth/api"
)

// kind is what a request does; the report counts statuses and latency per kind.
type kind int

const (
	kMe kind = iota
	kServers
	kServersRunning
	kServer
	kServerGone
	kLocations
	kApps
	kBilling
	kTransactions
	kOperation
	kOrder
	kDelete
	kPower
	kSnapCreate
	kSnapDelete
	kSnapList
	kMetrics
	nKinds
)

var kindName = [nKinds]string{
	kMe:             "GET /me",
	kServers:        "GET /servers",
	kServersRunning: "GET /servers?status=running",
	kServer:         "GET /servers/{id}",
	kServerGone:     "GET /servers/{id} (deleted)",
	kLocations:      "GET /locations",
	kApps:           "GET /apps",
	kBilling:        "GET /billing",
	kTransactions:   "GET /billing/transactions",
	kOperation:      "GET /operations/{id}",
	kOrder:          "POST /servers",
	kDelete:         "DELETE /servers/{id}",
	kPower:          "POST /servers/{id}/power",
	kSnapCreate:     "POST /servers/{id}/snapshots",
	kSnapDelete:     "DELETE /servers/{id}/snapshots/{s}",
	kSnapList:       "GET /servers/{id}/snapshots",
	kMetrics:        "GET /servers/{id}/metrics",
}

// rec is one request in a client's send log.
type rec struct {
	s, r      int64 // wall clock, Unix ns: just before sending; just after the response's headers arrived
	status    int   // 0: no response (transport error)
	kind      kind
	burst     bool  // sent in a burst, above the pace
	remaining int   // X-RateLimit-Remaining; -1 when missing or not a number
	reset     int64 // X-RateLimit-Reset; -1 likewise
}

// served reports whether berthd counted the request against the limit and let it through.
func (r rec) served() bool { return r.status != 0 && r.status != http.StatusTooManyRequests }

// stats are one client's counts; merged for the report.
type stats struct {
	byStatus map[int]int
	byKind   [nKinds]map[int]int
	codes    map[string]int // "409 busy", "422 validation_failed [action]"

	n5xx, nTransport, nBadBody, nOther int // failures: 5xx, no response, unreadable body, neither 2xx nor 4xx
	nGoneServed                        int // a deleted server answered 2xx (failure)
	fails                              []string

	hdrBad        int // limit headers missing or not the same under both names
	retryAfterBad int // 429 or 409 without a usable Retry-After
	hdrEx         []string
}

func newStats() stats {
	s := stats{byStatus: map[int]int{}, codes: map[string]int{}}
	for i := range s.byKind {
		s.byKind[i] = map[int]int{}
	}
	return s
}

func (s *stats) merge(o stats) {
	for k, v := range o.byStatus {
		s.byStatus[k] += v
	}
	for i := range o.byKind {
		for k, v := range o.byKind[i] {
			s.byKind[i][k] += v
		}
	}
	for k, v := range o.codes {
		s.codes[k] += v
	}
	s.n5xx += o.n5xx
	s.nTransport += o.nTransport
	s.nBadBody += o.nBadBody
	s.nOther += o.nOther
	s.nGoneServed += o.nGoneServed
	s.fails = append(s.fails, o.fails...)
	s.hdrBad += o.hdrBad
	s.retryAfterBad += o.retryAfterBad
	s.hdrEx = append(s.hdrEx, o.hdrEx...)
}

const keepExamples = 20

// client is one token's script.
type client struct {
	id      int
	account int64
	tokenID int64
	token   string
	burst   bool // bursts past the limit now and then

	base   string
	hc     *http.Client
	rng    *rand.Rand
	cfg    config
	log    []rec
	sent   atomic.Int64 // len(log), for the progress lines
	st     stats
	bursts int

	// What the client knows of its account.
	known    []int64 // servers of the account, from the last list
	status   map[int64]string
	own      []int64 // servers this client ordered, oldest first
	gone     []int64 // servers this client deleted, the last few
	ops      []int64 // operations seen, the last few
	snaps    []snapRef
	lastPage int
	seq      int
}

type snapRef struct{ server, id int64 }

func (c *client) init(cfg config, base string, seed uint64) {
	c.cfg, c.base = cfg, base
	c.rng = rand.New(rand.NewPCG(seed, uint64(c.id)))
	c.st = newStats()
	c.status = map[int64]string{}
	c.lastPage = 1
	// One keep-alive connection of its own, like a separate script would have.
	c.hc = &http.Client{
		Timeout: 60 * time.Second,
		Transport: &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
			MaxIdleConns:        1,
			MaxIdleConnsPerHost: 1,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
		},
	}
}

// run sends requests from start until deadline (Unix ns). The pace is a grid of
// 60 s / limit; after a slow answer the client catches up (at most maxBehind), as a
// script that wants its full budget would.
func (c *client) run(ctx context.Context, start, deadline int64) {
	const maxBehind = int64(10 * time.Second)
	interval := int64(time.Minute) / int64(c.cfg.limit)
	grid := start + c.rng.Int64N(interval)
	nextBurst := int64(-1)
	if c.burst {
		// The first burst after 10 s plus up to one mean gap, so that some land while
		// the window is still filling up and some once it is full.
		nextBurst = start + int64(10*time.Second) + c.rng.Int64N(int64(c.cfg.burstEvery))
	}
	for {
		next := grid
		if !c.burst && len(c.log) >= c.cfg.limit {
			// At the limit, never past it: not before 60 s after the response to the
			// request `limit` back arrived (berthd's timestamp of that one is earlier).
			if bound := c.log[len(c.log)-c.cfg.limit].r + int64(time.Minute) + int64(time.Millisecond); next < bound {
				next = bound
			}
		}
		if next >= deadline || !sleepUntil(ctx, next) {
			return
		}
		if c.burst && time.Now().UnixNano() >= nextBurst {
			n := c.cfg.burstMin + c.rng.IntN(c.cfg.burstMax-c.cfg.burstMin+1)
			for range n {
				if time.Now().UnixNano() >= deadline || ctx.Err() != nil {
					break
				}
				c.burstStep(ctx)
			}
			c.bursts++
			every := int64(c.cfg.burstEvery)
			nextBurst = time.Now().UnixNano() + every*2/3 + c.rng.Int64N(every*2/3+1)
		}
		if ctx.Err() != nil {
			return
		}
		c.step(ctx)
		grid += interval
		if now := time.Now().UnixNano(); grid < now-maxBehind {
			grid = now - maxBehind
		}
	}
}

// sleepUntil sleeps until the wall clock passes t (Unix ns); false when interrupted.
func sleepUntil(ctx context.Context, t int64) bool {
	for {
		d := time.Duration(t - time.Now().UnixNano())
		if d < 0 {
			return ctx.Err() == nil
		}
		tm := time.NewTimer(d)
		select {
		case <-ctx.Done():
			tm.Stop()
			return false
		case <-tm.C:
		}
	}
}

// step sends one request of the mix: about three quarters reads, one quarter writes.
func (c *client) step(ctx context.Context) {
	w := c.rng.IntN(1000)
	switch {
	case w < 80:
		c.do(ctx, kMe, "GET", "/v1/me", nil, false)
	case w < 170:
		c.listServers(ctx, false)
	case w < 200:
		c.listServers(ctx, true)
	case w < 360:
		c.getServer(ctx)
	case w < 375:
		c.getGone(ctx)
	case w < 420:
		c.do(ctx, kLocations, "GET", "/v1/locations", nil, false)
	case w < 440:
		c.do(ctx, kApps, "GET", "/v1/apps", nil, false)
	case w < 490:
		c.do(ctx, kBilling, "GET", "/v1/billing", nil, false)
	case w < 530:
		c.transactions(ctx)
	case w < 610:
		c.operation(ctx)
	case w < 645:
		c.order(ctx)
	case w < 660:
		c.deleteServer(ctx)
	case w < 770:
		c.power(ctx)
	case w < 815:
		c.createSnapshot(ctx)
	case w < 850:
		c.deleteSnapshot(ctx)
	case w < 890:
		c.listSnapshots(ctx)
	case w < 940:
		c.metrics(ctx)
	default:
		c.getServer(ctx)
	}
}

// burstStep is one read of a burst.
func (c *client) burstStep(ctx context.Context) {
	switch c.rng.IntN(4) {
	case 0:
		c.do(ctx, kMe, "GET", "/v1/me", nil, true)
	case 1:
		c.do(ctx, kBilling, "GET", "/v1/billing", nil, true)
	case 2:
		c.do(ctx, kServers, "GET", "/v1/servers", nil, true)
	default:
		if id := c.pickServer(nil); id != 0 {
			c.do(ctx, kServer, "GET", fmt.Sprintf("/v1/servers/%d", id), nil, true)
		} else {
			c.do(ctx, kMe, "GET", "/v1/me", nil, true)
		}
	}
}

// ---- the requests of the mix ----

func (c *client) listServers(ctx context.Context, running bool) {
	k, path := kServers, "/v1/servers"
	if running {
		k, path = kServersRunning, "/v1/servers?status=running"
	}
	status, b := c.do(ctx, k, "GET", path, nil, false)
	if status != http.StatusOK {
		return
	}
	var l api.List[api.Server]
	if json.Unmarshal(b, &l) != nil {
		return
	}
	if running {
		for _, s := range l.Data {
			c.see(s)
		}
		return
	}
	c.known = c.known[:0]
	for _, s := range l.Data {
		c.known = append(c.known, s.ID)
		c.see(s)
	}
}

func (c *client) getServer(ctx context.Context) {
	id := c.pickServer(nil)
	if id == 0 {
		c.listServers(ctx, false)
		return
	}
	status, b := c.do(ctx, kServer, "GET", fmt.Sprintf("/v1/servers/%d", id), nil, false)
	c.afterServer(id, status, b)
}

// getGone asks for a server this client deleted: 404 from the DELETE on.
func (c *client) getGone(ctx context.Context) {
	if len(c.gone) == 0 {
		c.getServer(ctx)
		return
	}
	id := c.gone[c.rng.IntN(len(c.gone))]
	status, b := c.do(ctx, kServerGone, "GET", fmt.Sprintf("/v1/servers/%d", id), nil, false)
	if status >= 200 && status < 300 {
		c.st.nGoneServed++
		c.failure(fmt.Sprintf("deleted server %d answered %d: %s", id, status, clip(b)))
	}
}

func (c *client) transactions(ctx context.Context) {
	page := 1 + c.rng.IntN(c.lastPage+1) // now and then the page past the end: empty, 200
	status, b := c.do(ctx, kTransactions, "GET", "/v1/billing/transactions?page="+strconv.Itoa(page), nil, false)
	if status != http.StatusOK {
		return
	}
	var p struct {
		Meta struct {
			LastPage int `json:"last_page"`
		} `json:"meta"`
	}
	if json.Unmarshal(b, &p) == nil && p.Meta.LastPage > 0 {
		c.lastPage = p.Meta.LastPage
	}
}

func (c *client) operation(ctx context.Context) {
	if len(c.ops) == 0 {
		c.do(ctx, kMe, "GET", "/v1/me", nil, false)
		return
	}
	id := c.ops[c.rng.IntN(len(c.ops))]
	c.do(ctx, kOperation, "GET", fmt.Sprintf("/v1/operations/%d", id), nil, false)
}

// order orders a server, or deletes this client's oldest when it has its share of
// the account's quota already.
func (c *client) order(ctx context.Context) {
	if len(c.own) >= c.cfg.ownCap {
		c.deleteServer(ctx)
		return
	}
	c.seq++
	body := map[string]any{
		"plan_id":      []int64{1, 1, 1, 2, 2, 3}[c.rng.IntN(6)],
		"location_id":  1 + c.rng.Int64N(3),
		"display_name": fmt.Sprintf("soak-%d-%d", c.id, c.seq),
	}
	if c.rng.IntN(7) == 0 {
		body["app_id"] = 1 + c.rng.Int64N(3)
	} else {
		body["image_id"] = 1 + c.rng.Int64N(2) // offered at every location
	}
	if c.rng.IntN(5) == 0 {
		body["root_password"] = fmt.Sprintf("soak-password-%d", c.seq)
	}
	status, b := c.do(ctx, kOrder, "POST", "/v1/servers", body, false)
	if status != http.StatusCreated {
		return
	}
	var one api.One[api.Server]
	if json.Unmarshal(b, &one) == nil && one.Data.ID != 0 {
		c.own = append(c.own, one.Data.ID)
		if !slices.Contains(c.known, one.Data.ID) {
			c.known = append(c.known, one.Data.ID)
		}
		c.see(one.Data)
	}
}

// deleteServer deletes this client's oldest server that is not busy as far as it
// knows (else its oldest: 409).
func (c *client) deleteServer(ctx context.Context) {
	if len(c.own) <= 1 {
		c.order(ctx)
		return
	}
	id := c.own[0]
	for _, o := range c.own {
		if st := c.status[o]; st == "running" || st == "stopped" {
			id = o
			break
		}
	}
	status, _ := c.do(ctx, kDelete, "DELETE", fmt.Sprintf("/v1/servers/%d", id), nil, false)
	if status == http.StatusNoContent || status == http.StatusNotFound {
		c.forget(id)
		if status == http.StatusNoContent {
			c.gone = append(c.gone, id)
			if len(c.gone) > 10 {
				c.gone = c.gone[1:]
			}
		}
	}
}

var powerFrom = map[string][]string{
	"running": {"shutdown", "off", "reboot", "reset"},
	"stopped": {"on"},
}

func (c *client) power(ctx context.Context) {
	id := c.pickServer(nil)
	if id == 0 {
		c.listServers(ctx, false)
		return
	}
	actions := powerFrom[c.status[id]]
	if len(actions) == 0 || c.rng.IntN(10) == 0 {
		actions = []string{"on", "shutdown", "off", "reboot", "reset"} // busy or the wrong state: 409 or 422
	}
	body := map[string]string{"action": actions[c.rng.IntN(len(actions))]}
	status, b := c.do(ctx, kPower, "POST", fmt.Sprintf("/v1/servers/%d/power", id), body, false)
	c.afterServer(id, status, b)
}

func (c *client) createSnapshot(ctx context.Context) {
	if len(c.snaps) >= 4 {
		c.deleteSnapshot(ctx)
		return
	}
	id := c.pickServer(func(st string) bool { return st == "running" || st == "stopped" })
	if id == 0 {
		c.listServers(ctx, false)
		return
	}
	c.seq++
	body := map[string]any{"name": fmt.Sprintf("soak%dn%d", c.id, c.seq), "include_memory": c.rng.IntN(5) == 0}
	status, b := c.do(ctx, kSnapCreate, "POST", fmt.Sprintf("/v1/servers/%d/snapshots", id), body, false)
	switch status {
	case http.StatusCreated:
		var one api.One[api.Snapshot]
		if json.Unmarshal(b, &one) == nil && one.Data.ID != 0 {
			c.snaps = append(c.snaps, snapRef{id, one.Data.ID})
		}
	case http.StatusNotFound:
		c.forget(id)
	case http.StatusConflict:
		c.afterServer(id, status, b)
	}
}

func (c *client) deleteSnapshot(ctx context.Context) {
	if len(c.snaps) == 0 {
		c.listSnapshots(ctx)
		return
	}
	s := c.snaps[0]
	status, _ := c.do(ctx, kSnapDelete, "DELETE", fmt.Sprintf("/v1/servers/%d/snapshots/%d", s.server, s.id), nil, false)
	if status == http.StatusAccepted || status == http.StatusNotFound {
		c.snaps = c.snaps[1:]
	}
}

func (c *client) listSnapshots(ctx context.Context) {
	id := c.pickServer(nil)
	if id == 0 {
		c.listServers(ctx, false)
		return
	}
	status, _ := c.do(ctx, kSnapList, "GET", fmt.Sprintf("/v1/servers/%d/snapshots", id), nil, false)
	if status == http.StatusNotFound {
		c.forget(id)
	}
}

func (c *client) metrics(ctx context.Context) {
	id := c.pickServer(nil)
	if id == 0 {
		c.listServers(ctx, false)
		return
	}
	rng := "1h"
	if c.rng.IntN(5) == 0 {
		rng = "24h"
	}
	status, _ := c.do(ctx, kMetrics, "GET", fmt.Sprintf("/v1/servers/%d/metrics?range=%s", id, rng), nil, false)
	if status == http.StatusNotFound {
		c.forget(id)
	}
}

// ---- what the client knows ----

// pickServer returns a server of the account, preferring those whose last seen
// status ok accepts; 0 when the client knows none.
func (c *client) pickServer(ok func(string) bool) int64 {
	if len(c.known) == 0 {
		return 0
	}
	if ok != nil {
		var fit []int64
		for _, id := range c.known {
			if ok(c.status[id]) {
				fit = append(fit, id)
			}
		}
		if len(fit) > 0 {
			return fit[c.rng.IntN(len(fit))]
		}
	}
	return c.known[c.rng.IntN(len(c.known))]
}

func (c *client) see(s api.Server) {
	c.status[s.ID] = s.Status
	if s.Operation != nil {
		c.noteOp(s.Operation.ID)
	}
}

func (c *client) noteOp(id int64) {
	if slices.Contains(c.ops, id) {
		return
	}
	c.ops = append(c.ops, id)
	if len(c.ops) > 20 {
		c.ops = c.ops[1:]
	}
}

func (c *client) forget(id int64) {
	c.known = slices.DeleteFunc(c.known, func(x int64) bool { return x == id })
	c.own = slices.DeleteFunc(c.own, func(x int64) bool { return x == id })
	c.snaps = slices.DeleteFunc(c.snaps, func(s snapRef) bool { return s.server == id })
	delete(c.status, id)
}

// afterServer updates what the client knows from a response about server id.
func (c *client) afterServer(id int64, status int, b []byte) {
	switch status {
	case http.StatusOK:
		var one api.One[api.Server]
		if json.Unmarshal(b, &one) == nil {
			c.see(one.Data)
		}
	case http.StatusConflict:
		var e api.Error
		if json.Unmarshal(b, &e) == nil && e.Operation != nil {
			c.noteOp(e.Operation.ID)
			c.status[id] = "busy"
		}
	case http.StatusNotFound:
		c.forget(id)
	}
}

// ---- one request, checked ----

// do sends one request and checks its response; it returns the status (0 for no
// response) and the body.
func (c *client) do(ctx context.Context, k kind, method, path string, body any, burst bool) (int, []byte) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			panic(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		panic(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	s := time.Now().UnixNano()
	resp, err := c.hc.Do(req)
	r := time.Now().UnixNano()
	if ctx.Err() != nil {
		if resp != nil {
			resp.Body.Close()
		}
		return 0, nil // interrupted: neither a response nor a failure
	}
	rc := rec{s: s, r: r, kind: k, burst: burst, remaining: -1, reset: -1}
	c.sent.Add(1)
	if err != nil {
		c.log = append(c.log, rc)
		c.st.nTransport++
		c.failure(fmt.Sprintf("%s %s: no response: %v", method, path, err))
		return 0, nil
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	rc.status = resp.StatusCode
	rc.remaining = headerInt(resp.Header, "X-RateLimit-Remaining")
	if v := headerInt(resp.Header, "X-RateLimit-Reset"); v >= 0 {
		rc.reset = int64(v)
	}
	c.log = append(c.log, rc)
	if err != nil {
		c.st.nTransport++
		c.failure(fmt.Sprintf("%s %s: %d, body unreadable: %v", method, path, resp.StatusCode, err))
		return 0, nil
	}
	c.check(k, method, path, resp, b)
	return resp.StatusCode, b
}

func (c *client) check(k kind, method, path string, resp *http.Response, b []byte) {
	st := resp.StatusCode
	c.st.byStatus[st]++
	c.st.byKind[k][st]++
	switch {
	case st >= 500:
		c.st.n5xx++
		c.failure(fmt.Sprintf("%s %s: %d %s", method, path, st, clip(b)))
	case st >= 200 && st < 300:
		if st != http.StatusNoContent && !json.Valid(b) {
			c.st.nBadBody++
			c.failure(fmt.Sprintf("%s %s: %d with a body that is not JSON: %s", method, path, st, clip(b)))
		}
	case st >= 400 && st < 500:
		var e api.Error
		if err := json.Unmarshal(b, &e); err != nil || e.Code == "" || e.Message == "" {
			c.st.nBadBody++
			c.failure(fmt.Sprintf("%s %s: %d with a body that is not an API error: %s", method, path, st, clip(b)))
			break
		}
		key := fmt.Sprintf("%d %s", st, e.Code)
		if len(e.Errors) > 0 {
			fields := make([]string, 0, len(e.Errors))
			for f := range e.Errors {
				fields = append(fields, f)
			}
			sort.Strings(fields)
			key += " [" + strings.Join(fields, ",") + "]"
		}
		c.st.codes[key]++
	default:
		c.st.nOther++
		c.failure(fmt.Sprintf("%s %s: status %d is neither 2xx nor 4xx: %s", method, path, st, clip(b)))
	}

	// Limit headers on every response (docs/api.md, Rate limits), the same under both names.
	h := resp.Header
	var bad []string
	for _, name := range []string{"Limit", "Remaining", "Reset"} {
		x, y := h.Get("X-RateLimit-"+name), h.Get("RateLimit-"+name)
		if _, err := strconv.ParseInt(x, 10, 64); err != nil || x != y {
			bad = append(bad, fmt.Sprintf("X-RateLimit-%s=%q RateLimit-%s=%q", name, x, name, y))
		}
	}
	if l := h.Get("X-RateLimit-Limit"); l != strconv.Itoa(c.cfg.limit) {
		bad = append(bad, fmt.Sprintf("X-RateLimit-Limit=%q, want %d", l, c.cfg.limit))
	}
	if rem := headerInt(h, "X-RateLimit-Remaining"); rem > c.cfg.limit {
		bad = append(bad, fmt.Sprintf("X-RateLimit-Remaining=%d above the limit", rem))
	}
	if len(bad) > 0 {
		c.st.hdrBad++
		if len(c.st.hdrEx) < keepExamples {
			c.st.hdrEx = append(c.st.hdrEx, fmt.Sprintf("%s %s %d: %s", method, path, st, strings.Join(bad, "; ")))
		}
	}
	if st == http.StatusTooManyRequests || st == http.StatusConflict {
		ra, err := strconv.Atoi(h.Get("Retry-After"))
		if err != nil || ra < 1 || (st == http.StatusTooManyRequests && ra > 60) {
			c.st.retryAfterBad++
			if len(c.st.hdrEx) < keepExamples {
				c.st.hdrEx = append(c.st.hdrEx, fmt.Sprintf("%s %s %d: Retry-After=%q", method, path, st, h.Get("Retry-After")))
			}
		}
	}
}

func (c *client) failure(msg string) {
	if len(c.st.fails) < keepExamples {
		c.st.fails = append(c.st.fails, fmt.Sprintf("%s token %d: %s", time.Now().UTC().Format("15:04:05.000"), c.tokenID, msg))
	}
	fmt.Fprintf(stderrSync, "FAIL token %d: %s\n", c.tokenID, msg)
}

func headerInt(h http.Header, name string) int {
	v, err := strconv.Atoi(h.Get(name))
	if err != nil {
		return -1
	}
	return v
}

func clip(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}
