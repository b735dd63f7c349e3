package app

import (
	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/compute/libvirtdriver"
	"github.com/berthhq/berth/internal/compute/simdriver"
)

// drivers are the compute drivers this build runs (serve --driver), each opened with
// what cfg sets for it. A new driver is one more registration here (docs/drivers.md).
func drivers(cfg Config) *compute.Registry {
	return compute.NewRegistry(
		compute.Registration{Name: "sim", Storage: simdriver.Storage(), Open: func(env compute.Env) (compute.Driver, error) {
			return simdriver.Open(env, cfg.SimTimeScale), nil
		}},
		compute.Registration{Name: "libvirt", Storage: libvirtdriver.Storage(), Open: func(env compute.Env) (compute.Driver, error) {
			return libvirtdriver.Open(env, cfg.Libvirt), nil
		}},
	)
}

// DriverNames are the names of the compute drivers this build runs (Config.Driver).
func DriverNames() []string { return drivers(Config{}).Names() }

// openDriver makes the compute driver of Config.Driver. Making one starts nothing: a
// driver with hosts connects to them when StartWorkers asks it to, or when an
// operator's command needs one.
func (a *App) openDriver() error {
	if a.cfg.Driver == "" {
		a.cfg.Driver = "sim"
	}
	d, err := drivers(a.cfg).Open(a.cfg.Driver, a.driverEnv())
	if err != nil {
		return err
	}
	a.base, a.driver = d, d
	if a.cfg.WrapDriver != nil {
		a.driver = compute.Wrap(a.cfg.WrapDriver(a.base), a.base)
	}
	return nil
}

// driverEnv is what a driver is opened with: the app's database and log.
func (a *App) driverEnv() compute.Env {
	dialect := compute.DialectSQLite
	if a.DB.Postgres() {
		dialect = compute.DialectPostgres
	}
	return compute.Env{DB: a.DB.WriteDB(), Read: a.DB.ReadDB(), Rebind: a.DB.Rebind, Dialect: dialect, Log: a.log}
}

// LibvirtDriver returns a libvirt driver on the app's database, whichever driver the
// app serves with (admin host, pool and image commands use it without starting
// workers).
func (a *App) LibvirtDriver() *libvirtdriver.Driver {
	return libvirtdriver.Open(a.driverEnv(), a.cfg.Libvirt)
}
