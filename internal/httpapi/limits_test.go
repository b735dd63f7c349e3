package httpapi_test

import (
	"context"
	"sync"
	"testing"

	"github.com/berthhq/berth/internal/catalog"
	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/testenv"
)

// limitsSeen is a driver that remembers the limits each machine was created and
// resized with.
type limitsSeen struct {
	compute.Driver
	mu      sync.Mutex
	created map[string]compute.Limits
	resized map[string]compute.Limits
}

func (d *limitsSeen) Create(ctx context.Context, key string, spec compute.Spec) (compute.Machine, error) {
	d.mu.Lock()
	d.created[spec.Name] = spec.Limits
	d.mu.Unlock()
	return d.Driver.Create(ctx, key, spec)
}

func (d *limitsSeen) Resize(ctx context.Context, key, name string, size compute.Size) error {
	d.mu.Lock()
	d.resized[name] = size.Limits
	d.mu.Unlock()
	return d.Driver.Resize(ctx, key, name, size)
}

func (d *limitsSeen) seen(name string) (created, resized compute.Limits) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.created[name], d.resized[name]
}

// TestPlanLimits: a plan's limits show in /locations and in the rescale options
// (only those it sets: an absent field is no limit), and reach the machine: its
// creation with the plan's, a rescale with the new plan's (none of the new plan's
// is none, not the old one's).
func TestPlanLimits(t *testing.T) {
	t.Parallel()
	rec := &limitsSeen{created: map[string]compute.Limits{}, resized: map[string]compute.Limits{}}
	env := testenv.New(t, testenv.Options{WrapDriver: func(d compute.Driver) compute.Driver { rec.Driver = d; return rec }})
	cat := catalog.Default()
	for i, p := range cat.Plans {
		switch p.ID {
		case 1:
			cat.Plans[i].NetworkMbps, cat.Plans[i].DiskIOPS, cat.Plans[i].DiskMBps = 100, 1000, 50
		case 2:
			cat.Plans[i].NetworkMbps = 250
		}
	}
	if err := env.App.Service.ApplyCatalog(context.Background(), cat); err != nil {
		t.Fatal(err)
	}
	a := env.NewAccount("en", "100", "")
	want := map[int64]map[string]any{
		1: {"network_mbps": 100.0, "disk_iops": 1000.0, "disk_mbps": 50.0},
		2: {"network_mbps": 250.0},
		3: {},
	}
	check := func(where string, p map[string]any) {
		t.Helper()
		w, ok := want[num(t, p["id"])]
		if !ok {
			return
		}
		for _, k := range []string{"network_mbps", "disk_iops", "disk_mbps"} {
			if got, has := p[k]; got != w[k] || has != (w[k] != nil) {
				t.Errorf("%s: plan %v %s = %v (present %v), want %v", where, p["id"], k, got, has, w[k])
			}
		}
	}
	locs := items(t, a.Do("GET", "/locations", nil).Want(t, 200))
	for _, p := range locs[0]["plans"].([]any) {
		check("/locations", p.(map[string]any))
	}

	srv := runningServer(t, a, "plan_id", 1)
	name := srv["name"].(string)
	if c, _ := rec.seen(name); c != (compute.Limits{NetworkMbps: 100, DiskIOPS: 1000, DiskMBps: 50}) {
		t.Errorf("created with limits %+v, want plan 1's", c)
	}
	powerWait(t, a, name, "off")
	for _, o := range items(t, a.Do("GET", "/servers/"+name+"/rescale-options", nil).Want(t, 200)) {
		check("rescale options", o)
	}
	opWait(t, a, "POST", "/servers/"+name+"/rescale", map[string]any{"plan_id": 2}, "rescaling", "rescale")
	if _, r := rec.seen(name); r != (compute.Limits{NetworkMbps: 250}) {
		t.Errorf("rescaled with limits %+v, want plan 2's: 250 Mbit/s and nothing else", r)
	}
}
