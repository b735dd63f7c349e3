package compute

import (
	"database/sql"
	"fmt"
	"log/slog"
	"strings"
)

// Env is what a driver is opened with: the database its tables are in (the store's,
// migrated with the driver's Storage before it opens) and the process's log.
type Env struct {
	// DB is the pool of writes, and of reads that must see them.
	DB *sql.DB
	// Read is the pool of read-only connections, which read beside a write (on
	// PostgreSQL the same pool as DB).
	Read *sql.DB
	// Rebind turns a query written with ? placeholders into the database's dialect.
	Rebind func(string) string
	// Dialect is the database's: DialectSQLite or DialectPostgres.
	Dialect string
	Log     *slog.Logger
}

// Registration is a driver a build can run.
type Registration struct {
	// Name is what berthd serve --driver calls it.
	Name string
	// Storage is its tables in Berth's database (docs/drivers.md); the zero Storage
	// for a driver that keeps none.
	Storage Storage
	// Open makes the driver. It starts nothing: what a driver does in the background
	// starts when a process works operations (an ability such as Hosted).
	Open func(Env) (Driver, error)
}

// Registry is the drivers a build knows, in the order they were registered
// (internal/app lists them; docs/drivers.md). The zero Registry knows none.
type Registry struct {
	regs []Registration
}

// NewRegistry registers regs in order (Register).
func NewRegistry(regs ...Registration) *Registry {
	r := &Registry{}
	for _, reg := range regs {
		r.Register(reg)
	}
	return r
}

// Register adds a driver. A registration without a name or Open, or one whose name
// or migration line another driver has already (two drivers on one line would share
// goose's version table and each other's tables), is a mistake of the build's and
// panics, naming both.
func (r *Registry) Register(reg Registration) {
	if reg.Name == "" || reg.Open == nil {
		panic(fmt.Sprintf("compute: registering driver %q: a driver needs a name and Open", reg.Name))
	}
	for _, had := range r.regs {
		if had.Name == reg.Name {
			panic(fmt.Sprintf("compute: driver %q registered twice", reg.Name))
		}
		if reg.Storage.Line != "" && had.Storage.Line == reg.Storage.Line {
			panic(fmt.Sprintf("compute: drivers %q and %q both claim the migration line %q",
				had.Name, reg.Name, reg.Storage.Line))
		}
	}
	r.regs = append(r.regs, reg)
}

// Open opens the driver called name; an unknown name is an error that lists the
// names the registry knows.
func (r *Registry) Open(name string, env Env) (Driver, error) {
	for _, reg := range r.regs {
		if reg.Name == name {
			return reg.Open(env)
		}
	}
	return nil, fmt.Errorf("unknown driver %q (this build knows: %s)", name, strings.Join(r.Names(), ", "))
}

// Names are the drivers' names, in order.
func (r *Registry) Names() []string {
	out := make([]string, len(r.regs))
	for i, reg := range r.regs {
		out[i] = reg.Name
	}
	return out
}

// Storage is the tables of every driver that keeps some, in order: a database holds
// those of every driver the build knows, whichever one serves it.
func (r *Registry) Storage() []Storage {
	var out []Storage
	for _, reg := range r.regs {
		if reg.Storage.Line != "" {
			out = append(out, reg.Storage)
		}
	}
	return out
}
