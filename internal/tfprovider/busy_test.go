package tfprovider_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/testenv"
)

// fault adds a sandbox fault (docs/api.md, The sandbox) to the account.
func (a *acc) fault(spec map[string]any) {
	a.t.Helper()
	a.acct.Sandbox("POST", "/faults", spec).Want(a.t, http.StatusCreated)
}

// journal is the account's request journal since entry after, oldest first.
func (a *acc) journal(after int64) []api.SandboxRequest {
	a.t.Helper()
	var out api.List[api.SandboxRequest]
	a.acct.Sandbox("GET", "/requests?limit=1000", nil).Want(a.t, http.StatusOK).JSON(a.t, &out)
	var list []api.SandboxRequest
	for _, r := range out.Data {
		if r.ID > after {
			list = append(list, r)
		}
	}
	slices.Reverse(list)
	return list
}

// lastEntry is the id of the journal's newest entry.
func (a *acc) lastEntry() int64 {
	if l := a.journal(0); len(l) > 0 {
		return l[len(l)-1].ID
	}
	return 0
}

// answered checks the journal since *mark: the calls of method to a path ending in
// suffix answered statuses, in this order.
func (a *acc) answered(mark *int64, method, suffix string, statuses ...int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		var got []int
		for _, r := range a.journal(*mark) {
			if r.Method == method && strings.HasSuffix(r.Path, suffix) {
				got = append(got, r.Status)
			}
		}
		if !slices.Equal(got, statuses) {
			return fmt.Errorf("%s …%s answered %v, want %v", method, suffix, got, statuses)
		}
		return nil
	}
}

// gatedStart holds each machine start while it is armed, until it is released.
type gatedStart struct {
	compute.Driver
	mu   sync.Mutex
	gate chan struct{} // nil: not armed
}

func (g *gatedStart) arm() {
	g.mu.Lock()
	g.gate = make(chan struct{})
	g.mu.Unlock()
}

func (g *gatedStart) release() {
	g.mu.Lock()
	if g.gate != nil {
		close(g.gate)
		g.gate = nil
	}
	g.mu.Unlock()
}

func (g *gatedStart) Start(ctx context.Context, key, name string) error {
	g.mu.Lock()
	gate := g.gate
	g.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return g.Driver.Start(ctx, key, name)
}

// onAnswer calls f with each request and the status it was answered.
type onAnswer struct {
	base http.RoundTripper
	f    func(req *http.Request, status int)
}

func (o onAnswer) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := o.base.RoundTrip(req)
	if err == nil {
		o.f(req, resp.StatusCode)
	}
	return resp, err
}

// TestAccServerBusy: what an apply meets on the way is waited out. 409 (busy) and
// 503 (unavailable) answers, injected with sandbox faults, are sent again; an ACPI
// shutdown the guest ignores (an operation fault) is followed by a forced power-off;
// a change met by an operation someone else started waits for that operation, named
// in the 409, and is made once it has ended.
func TestAccServerBusy(t *testing.T) {
	gate := &gatedStart{}
	a := newAcc(t, "en", testenv.Options{Sandbox: true, RateLimit: 1 << 20,
		WrapDriver: func(d compute.Driver) compute.Driver { gate.Driver = d; return gate }})
	t.Cleanup(gate.release)
	a.opts = []client.Option{client.WithHTTPClient(&http.Client{Timeout: a.env.Client.Timeout,
		Transport: onAnswer{a.env.Client.Transport, func(req *http.Request, status int) {
			if req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/snapshots") && status == http.StatusConflict {
				gate.release()
			}
		}}})}
	const x = "berth_server.x"
	srv := func(args string) string {
		return a.config(server(`location = "fsn1"; plan = "s1-1c-1g"; image = "debian-12"; ` + args))
	}
	var mark, id int64
	var powerOn *api.Server
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.providers(),
		CheckDestroy:             a.serverGone(),
		Steps: []resource.TestStep{
			{Config: srv(`display_name = "a"`), Check: resource.ComposeAggregateTestCheckFunc(a.serverAgrees(x), sameServer(x, &id, true))},
			{
				PreConfig: func() {
					mark = a.lastEntry()
					a.fault(map[string]any{"method": "POST", "path": "/servers/{id}/power", "status": 409, "times": 2})
					a.fault(map[string]any{"method": "PATCH", "path": "/servers/{id}", "status": 503, "times": 1})
				},
				Config: srv(`display_name = "b"; power_state = "stopped"`),
				Check: resource.ComposeAggregateTestCheckFunc(a.serverAgrees(x),
					resource.TestCheckResourceAttr(x, "status", "stopped"),
					a.answered(&mark, "PATCH", "", 503, 200),
					a.answered(&mark, "POST", "/power", 409, 409, 200)),
			},
			{Config: srv(`display_name = "b"; power_state = "running"`), Check: a.serverAgrees(x)},
			{
				PreConfig: func() {
					mark = a.lastEntry()
					a.fault(map[string]any{"operation": "power", "fail": true, "times": 1})
				},
				Config: srv(`display_name = "b"; power_state = "stopped"`),
				Check: resource.ComposeAggregateTestCheckFunc(a.serverAgrees(x),
					resource.TestCheckResourceAttr(x, "status", "stopped"),
					func(*terraform.State) error {
						var actions []string
						for _, r := range a.journal(mark) {
							if r.Method == "POST" && strings.HasSuffix(r.Path, "/power") {
								var body api.PowerRequest
								if err := json.Unmarshal(r.RequestBody, &body); err != nil || body.Action == nil {
									return fmt.Errorf("power request body %s: %v", r.RequestBody, err)
								}
								actions = append(actions, *body.Action)
							}
						}
						if want := []string{client.PowerShutdown, client.PowerOff}; !slices.Equal(actions, want) {
							return fmt.Errorf("power actions %v, want %v (the ignored shutdown, then forced)", actions, want)
						}
						return nil
					}),
			},
			{
				PreConfig: func() {
					// Someone else starts the server; its start is held until the
					// provider has met the 409 (or a minute has passed).
					gate.arm()
					time.AfterFunc(time.Minute, gate.release)
					var err error
					if powerOn, err = a.c.PowerServer(a.ctx(), client.ID(id), client.PowerOn); err != nil {
						t.Fatalf("power on through the API: %v", err)
					}
					mark = a.lastEntry()
				},
				Config: srv(`display_name = "b"`) + hcl(`resource "berth_snapshot" "s" { server_id = berth_server.x.id; name = "s1" }`),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("berth_snapshot.s", "status", "available"),
					a.answered(&mark, "POST", "/snapshots", 409, 201),
					func(*terraform.State) error {
						op, err := a.c.GetOperation(a.ctx(), powerOn.Operation.ID)
						if err != nil {
							return err
						}
						for _, r := range a.journal(mark) {
							if r.Method == "POST" && strings.HasSuffix(r.Path, "/snapshots") && r.Status == 201 &&
								(op.FinishedAt == nil || r.Time.Before(*op.FinishedAt)) {
								return fmt.Errorf("the snapshot was taken at %v, before the power operation ended (%v)", r.Time, op.FinishedAt)
							}
						}
						return nil
					}),
			},
		},
	})
}

// dropFirstOrder loses the answer to the first order (POST /v1/servers) after Berth
// has made the server, as a network failure would.
type dropFirstOrder struct {
	base    http.RoundTripper
	mu      sync.Mutex
	dropped int
}

func (d *dropFirstOrder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := d.base.RoundTrip(req)
	if err != nil || req.Method != http.MethodPost || req.URL.Path != "/v1/servers" {
		return resp, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dropped > 0 {
		return resp, err
	}
	d.dropped++
	resp.Body.Close()
	return nil, errors.New("connection reset by peer (the test lost the answer)")
}

// TestAccServerOrderRetried: an order whose answer is lost is sent again by the SDK
// with the same Idempotency-Key, and the apply ends with the one server Berth made.
func TestAccServerOrderRetried(t *testing.T) {
	a := newAcc(t, "en")
	drop := &dropFirstOrder{base: a.env.Client.Transport}
	a.opts = []client.Option{client.WithHTTPClient(&http.Client{Transport: drop, Timeout: a.env.Client.Timeout})}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.providers(),
		CheckDestroy:             a.serverGone(),
		Steps: []resource.TestStep{{
			Config: a.config(server(`location = "fsn1"; plan = "s1-1c-1g"; image = "debian-12"`)),
			Check: resource.ComposeAggregateTestCheckFunc(a.serverAgrees("berth_server.x"), func(s *terraform.State) error {
				all, err := a.c.ListServers(a.ctx(), client.ServerListOptions{})
				if err != nil {
					return err
				}
				id, err := idOf(s, "berth_server.x")
				if drop.dropped != 1 || len(all) != 1 || err != nil || all[0].ID != id {
					return fmt.Errorf("%d answers lost; the account has %d servers (%v), the state %d (%v): want one, the state's",
						drop.dropped, len(all), all, id, err)
				}
				return nil
			}),
		}},
	})
}

// TestAccServerTimeouts: the timeouts block bounds a create; the server it ordered is
// kept in the state, tainted, and the next apply replaces it (its deletion waiting
// for the provisioning while that is still in progress).
func TestAccServerTimeouts(t *testing.T) {
	a := newAcc(t, "en", testenv.Options{Sandbox: true, RateLimit: 1 << 20, SimTimeScale: 0.2})
	const x = "berth_server.x"
	config := func(create string) string {
		return a.config(fmt.Sprintf(`
resource "berth_server" "x" {
  location = "fsn1"
  plan     = "s1-1c-1g"
  image    = "debian-12"
  timeouts {
    create = %q
  }
}
`, create))
	}
	var first int64
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.providers(),
		CheckDestroy:             a.serverGone(),
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					// A provisioning of about 60 s (30 s × 0.2 × 10), a timeout of 20 s:
					// room for the order's own request on a loaded machine (CI saw
					// it take over 5 s), none for the provisioning.
					a.fault(map[string]any{"operation": "provision", "slow": 10, "times": 1})
				},
				Config:      config("20s"),
				ExpectError: regexp.MustCompile(`(?s)did not become running.*context deadline exceeded`),
			},
			{
				Config: config("3m"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(x, plancheck.ResourceActionDestroyBeforeCreate)}},
				PreConfig: func() {
					all, err := a.c.ListServers(a.ctx(), client.ServerListOptions{})
					if err != nil || len(all) != 1 {
						t.Fatalf("after the timeout: servers %+v (%v), want the one ordered", all, err)
					}
					first = all[0].ID
				},
				Check: resource.ComposeAggregateTestCheckFunc(a.serverAgrees(x), func(s *terraform.State) error {
					if id, err := idOf(s, x); err != nil || id == first {
						return fmt.Errorf("server %d after the replacement of the tainted %d (%v)", id, first, err)
					}
					if _, err := a.c.GetServer(a.ctx(), client.ID(first)); !isNotFound(err) {
						return fmt.Errorf("the tainted server %d: %v, want it deleted", first, err)
					}
					return nil
				}),
			},
		},
	})
}
