package ops

import (
	"context"
	"database/sql"
	"errors"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/store"
)

// The sandbox's use cases that change an account's records (serve --sandbox,
// docs/api.md, The sandbox): reset (sandbox_reset.go), seed (sandbox_seed.go) and the fixed
// accounts of serve --seed (sandbox_fixtures.go). They run the real use cases and
// rules; what they add is doing at once what an operation would take its time for.

// InstantMachines makes and removes machines and volumes at once, inside the store
// transaction that writes their servers and volumes (tx.SQL()). Only a driver whose machines live in Berth's
// own database can: the simulated one (simdriver.Driver).
type InstantMachines interface {
	// PlaceTx makes a machine of spec already in state (running or stopped).
	PlaceTx(ctx context.Context, tx *sql.Tx, spec compute.Spec, state compute.State) (compute.Machine, error)
	// RemoveTx destroys machines at once; names without a machine are left alone.
	RemoveTx(ctx context.Context, tx *sql.Tx, names []string) error
	// PlaceVolumeTx makes a volume of spec at once, attached to machine (made in tx
	// or before) unless machine is "", automounted as asked.
	PlaceVolumeTx(ctx context.Context, tx *sql.Tx, spec compute.VolumeSpec, machine string, automount bool) error
	// RemoveVolumesTx removes volumes and their data at once; names without a
	// volume are left alone.
	RemoveVolumesTx(ctx context.Context, tx *sql.Tx, names []string) error
}

// errNoInstantMachines is why a sandbox call that needs InstantMachines fails
// without them (the sandbox runs on the sim driver only: it never happens there).
var errNoInstantMachines = errors.New("the sandbox needs the sim driver, whose machines can be made and removed at once")

// atomically runs fn so that the write transactions it runs under the context it is
// given commit together when it returns nil, or not at all: the first is held open
// and the others join it as savepoints (store.Hold), each atomic on its own. Under a
// context that holds a transaction already, fn's join that one and its holder
// decides.
func (s *Service) atomically(ctx context.Context, fn func(ctx context.Context) error) error {
	if store.HoldOf(ctx) != nil {
		return fn(ctx)
	}
	ctx, hold := store.WithHold(ctx)
	defer hold.Release()
	if err := fn(ctx); err != nil {
		return err
	}
	return hold.Commit(func(store.Tx) error { return nil })
}
