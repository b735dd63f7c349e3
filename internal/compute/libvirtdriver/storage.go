package libvirtdriver

import (
	"embed"
	"io/fs"

	"github.com/berthhq/berth/internal/compute"
)

//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrations embed.FS

// Storage is the libvirt driver's tables in Berth's database and the migrations that
// make them (docs/drivers.md).
func Storage() compute.Storage {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		panic(err) // the directory is embedded above
	}
	return compute.Storage{Line: "libvirt", Migrations: sub,
		Tables: []string{"libvirt_hosts", "libvirt_images", "libvirt_address_pools", "libvirt_addresses", "libvirt_machines", "libvirt_keys",
			"libvirt_volume_pools", "libvirt_volumes"}}
}
