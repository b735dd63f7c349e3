package simdriver

import (
	"embed"
	"io/fs"

	"github.com/berthhq/berth/internal/compute"
)

//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrations embed.FS

// Storage is the simulated driver's tables in Berth's database and the migrations
// that make them (docs/drivers.md).
func Storage() compute.Storage {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		panic(err) // the directory is embedded above
	}
	return compute.Storage{Line: "sim", Migrations: sub,
		Tables: []string{"sim_machines", "sim_events", "sim_snapshots", "sim_counters", "sim_volumes", "sim_volume_events"}}
}
