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
	// Storage is its tables in Berth's database (docs/drivers.md).
	Storage Storage
	// Open makes the driver. It starts nothing: what a driver does in the background
	// starts when a process works operations (an ability such as Hosted).
	Open func(Env) (Driver, error)
}

// Registry is the drivers a build knows, in the order their names are listed
// (internal/app lists them).
type Registry []Registration

// Open opens the driver called name; an unknown name is an error that lists the
// names the registry knows.
func (r Registry) Open(name string, env Env) (Driver, error) {
	for _, reg := range r {
		if reg.Name == name {
			return reg.Open(env)
		}
	}
	return nil, fmt.Errorf("unknown driver %q (this build knows: %s)", name, strings.Join(r.Names(), ", "))
}

// Names are the drivers' names, in order.
func (r Registry) Names() []string {
	out := make([]string, len(r))
	for i, reg := range r {
		out[i] = reg.Name
	}
	return out
}

// Storage is every driver's tables, in order: a database holds those of every driver
// the build knows, whichever one serves it.
func (r Registry) Storage() []Storage {
	out := make([]Storage, len(r))
	for i, reg := range r {
		out[i] = reg.Storage
	}
	return out
}
