package app

import (
	"context"
	"net/url"
	"time"

	"github.com/berthhq/berth/internal/compute/libvirtdriver"
	"github.com/berthhq/berth/internal/telemetry"
)

// LibvirtDriver returns a libvirt driver on the app's database (admin host, pool and
// image commands use it without starting workers).
func (a *App) LibvirtDriver() *libvirtdriver.Driver {
	opt := a.cfg.Libvirt
	if opt.Log == nil {
		opt.Log = a.log
	}
	if a.DB.Postgres() {
		opt.ForUpdate = " FOR UPDATE"
	}
	return libvirtdriver.New(a.DB.WriteDB(), a.DB.ReadDB(), a.DB.Rebind, opt)
}

// prepareHosts connects to every libvirt host as the process starts, in the
// background: a new connection brings Berth's network filters on the host up to date,
// so an upgrade's filters reach every host, not only those whose servers are touched.
// A host that cannot be reached gets them when Berth next connects to it.
func (a *App) prepareHosts(lv *libvirtdriver.Driver) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := lv.ConnectHosts(ctx); err != nil && ctx.Err() == nil {
			a.log.Warn("libvirt: hosts not reached at start", "err", err)
		}
	}()
	a.stopHosts = func() {
		cancel()
		<-done
	}
}

// startReconcile makes idle servers' statuses follow their machines: a guest that
// powered itself off becomes stopped. A host that cannot be reached is skipped (its
// machines keep their statuses until it answers again).
func (a *App) startReconcile() {
	d := a.cfg.ReconcileEvery
	if d <= 0 {
		d = 5 * time.Second
	}
	a.stopReconcile = every(d, func(ctx context.Context) {
		if !a.lead.Leads(ctx) {
			return
		}
		targets, err := a.DB.MetricTargets(ctx)
		if err != nil {
			return
		}
		for _, tg := range targets {
			m, err := a.driver.Machine(ctx, tg.Name)
			if err != nil {
				continue
			}
			if _, err := a.Service.ReconcilePower(ctx, tg.ServerID, m.State); err != nil && ctx.Err() == nil {
				a.log.Warn("reconcile", "server", tg.Name, "err", err)
			}
		}
	})
}

// watchHosts shows the libvirt driver's hosts in the operators' metrics: capacity and
// use from the database, reachability as this process last found it.
func (a *App) watchHosts(lv *libvirtdriver.Driver) error {
	if a.cfg.Telemetry == nil {
		return nil
	}
	unwatch, err := a.cfg.Telemetry.WatchHosts(func(ctx context.Context) ([]telemetry.Host, error) {
		hs, err := lv.Hosts(ctx, 0)
		if err != nil {
			return nil, err
		}
		out := make([]telemetry.Host, 0, len(hs))
		for _, h := range hs {
			out = append(out, telemetry.Host{ID: h.ID, LocationID: h.LocationID, Address: uriHost(h.URI),
				VCPUs: h.VCPUs, UsedVCPUs: h.UsedVCPUs, MemoryMB: h.MemoryMB, UsedMemoryMB: h.UsedMemoryMB,
				DiskGB: h.DiskGB, UsedDiskGB: h.UsedDisk, Machines: h.Machines, Draining: h.Draining, Reachable: lv.Reachable(h.ID)})
		}
		return out, nil
	})
	if err != nil {
		return err
	}
	a.unwatch = append(a.unwatch, unwatch)
	return nil
}

// uriHost is the host of a libvirt URI without its user, port or parameters (which
// may name key files): "local" for a local socket.
func uriHost(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Hostname() == "" {
		return "local"
	}
	return u.Hostname()
}
