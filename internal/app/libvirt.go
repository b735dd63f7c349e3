package app

import (
	"context"
	"time"

	"github.com/berthhq/berth/internal/compute/libvirtdriver"
)

// LibvirtDriver returns a libvirt driver on the app's database (admin host, pool and
// image commands use it without starting workers).
func (a *App) LibvirtDriver() *libvirtdriver.Driver {
	opt := a.cfg.Libvirt
	if opt.Log == nil {
		opt.Log = a.log
	}
	return libvirtdriver.New(a.DB.WriteDB(), a.DB.ReadDB(), a.DB.Rebind, opt)
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
