package app

import (
	"context"
	"time"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/telemetry"
)

// prepareHosts connects to every host of a Hosted driver as the process starts, in
// the background: a new libvirt connection brings Berth's network filters on the host
// up to date, so an upgrade's filters reach every host, not only those whose servers
// are touched. A host that cannot be reached gets them when Berth next connects to it.
func (a *App) prepareHosts(h compute.Hosted) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := h.ConnectHosts(ctx); err != nil && ctx.Err() == nil {
			a.log.Warn(a.cfg.Driver+": hosts not reached at start", "err", err)
		}
	}()
	a.stopHosts = func() {
		cancel()
		<-done
	}
}

// startReconcile makes idle servers' statuses follow their machines, on a Hosted
// driver: a guest that powered itself off becomes stopped. A host that cannot be
// reached is skipped (its machines keep their statuses until it answers again).
func (a *App) startReconcile() {
	d := a.cfg.ReconcileEvery
	if d <= 0 {
		d = 5 * time.Second
	}
	a.stopReconcile = every(d, func(ctx context.Context) {
		if a.lead.Leads(ctx) {
			a.reconcile(ctx)
		}
	})
}

// reconcile compares every idle server's status with its machine's power once. A
// driver that reads many machines' states at once (compute.StatesBatcher: the
// libvirt driver, one call a host) is asked so, and each machine whose state
// differs is read again alone (Machine, which checks the domain is Berth's) before
// its server changes; another is asked machine by machine. Only a server whose
// state differs is written: a round of 10,000 servers where nothing changed is one
// query of the store and one call a host.
func (a *App) reconcile(ctx context.Context) {
	targets, err := a.DB.PowerTargets(ctx)
	if err != nil || len(targets) == 0 {
		return
	}
	batch, batched := compute.As[compute.StatesBatcher](a.driver)
	var states map[string]compute.State
	if batched {
		names := make([]string, len(targets))
		for i, tg := range targets {
			names[i] = tg.Name
		}
		states, _ = batch.StatesOf(ctx, names) // a machine whose host failed is left as it is
	} else {
		states = make(map[string]compute.State, len(targets))
		for _, tg := range targets {
			if m, err := a.driver.Machine(ctx, tg.Name); err == nil {
				states[tg.Name] = m.State
			}
		}
	}
	for _, tg := range targets {
		st, ok := states[tg.Name]
		if !ok || st == powerState(tg.Status) {
			continue
		}
		if batched {
			m, err := a.driver.Machine(ctx, tg.Name)
			if err != nil {
				continue
			}
			st = m.State
		}
		if _, err := a.Service.ReconcilePower(ctx, tg.ServerID, st); err != nil && ctx.Err() == nil {
			a.log.Warn("reconcile", "server", tg.Name, "err", err)
		}
	}
}

// powerState is the machine's state a server's status stands for.
func powerState(s hosting.Status) compute.State {
	if s == hosting.StatusRunning {
		return compute.StateRunning
	}
	return compute.StateStopped
}

// watchHosts shows a Hosted driver's hosts in the operators' metrics: capacity and
// use from the database, reachability as this process last found it.
func (a *App) watchHosts(h compute.Hosted) error {
	if a.cfg.Telemetry == nil {
		return nil
	}
	unwatch, err := a.cfg.Telemetry.WatchHosts(func(ctx context.Context) ([]telemetry.Host, error) {
		hs, err := h.HostUsage(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]telemetry.Host, 0, len(hs))
		for _, u := range hs {
			out = append(out, telemetry.Host{ID: u.ID, LocationID: u.LocationID, Address: u.Address,
				VCPUs: u.VCPUs, UsedVCPUs: u.UsedVCPUs, MemoryMB: u.MemoryMB, UsedMemoryMB: u.UsedMemoryMB,
				DiskGB: u.DiskGB, UsedDiskGB: u.UsedDiskGB, Machines: u.Machines, Draining: u.Draining, Reachable: u.Reachable})
		}
		return out, nil
	})
	if err != nil {
		return err
	}
	a.unwatch = append(a.unwatch, unwatch)
	return nil
}
