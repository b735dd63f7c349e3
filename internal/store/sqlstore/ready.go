package sqlstore

import (
	"context"
	"fmt"

	"github.com/berthhq/berth/internal/store"
)

// Ready implements store.Store. The ping goes to the write pool, the pool every change
// needs; the schema's version is read on the read pool, so that a probe never waits
// for the writer longer than the ping did, and never writes (goose's own version
// check creates its table when it is missing). A schema newer than this build's is
// ready: while processes are upgraded one at a time, the first one migrates and the
// older ones keep serving (migrations only add). Every line is checked: the store's
// and each driver's (lines.go).
func (db *DB) Ready(ctx context.Context) error {
	if err := db.write.PingContext(ctx); err != nil {
		return fmt.Errorf("%w: %v", store.ErrUnreachable, err)
	}
	lines, err := db.lines()
	if err != nil {
		return err
	}
	for _, l := range lines {
		want, err := db.want(l)
		if err != nil {
			return err
		}
		have, err := db.have(ctx, l, db.read)
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("%w: %v", store.ErrUnreachable, err)
			}
			// No version table, or no version in it: never migrated.
			return fmt.Errorf("%w: schema%s version unknown: %v", store.ErrNotMigrated, l.of(), err)
		}
		if have < want {
			return fmt.Errorf("%w: schema%s at version %d, this build needs %d", store.ErrNotMigrated, l.of(), have, want)
		}
	}
	return nil
}
