package sqlstore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/berthhq/berth/internal/catalog"
	"github.com/berthhq/berth/internal/metrics/metricstest"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store/sqlstore"
	"github.com/berthhq/berth/internal/store/sqlstore/sqlstoretest"
)

// TestMetricsConformance: the SQL store, the embedded metrics backend, passes the
// metrics conformance suite on SQLite and on PostgreSQL.
func TestMetricsConformance(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		open func(t *testing.T) *sqlstore.DB
	}{
		{"sqlite", func(t *testing.T) *sqlstore.DB { return sqlstoretest.SQLite(t, t.TempDir()) }},
		{"postgres", func(t *testing.T) *sqlstore.DB { return sqlstoretest.Postgres(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db := tc.open(t)
			metricstest.Run(t, db, metricstest.Options{Servers: metricServers(t, db)})
		})
	}
}

// metricServers makes servers rows (the SQL store prunes the samples of servers it
// has rows of, deleted ones too).
func metricServers(t *testing.T, db *sqlstore.DB) func(t *testing.T, n int) []int64 {
	ctx := context.Background()
	if err := ops.New(ops.Deps{Store: db}).EnsureCatalog(ctx, catalog.Default()); err != nil {
		t.Fatal(err)
	}
	w := db.WriteDB()
	if _, err := w.Exec(`INSERT INTO accounts (email, password_hash, name, server_quota, created_at) VALUES ('m@example.com', '', 'm', 10, 0)`); err != nil {
		t.Fatal(err)
	}
	made := 0
	return func(t *testing.T, n int) []int64 {
		ids := make([]int64, n)
		for i := range ids {
			made++
			if err := w.QueryRowContext(ctx, db.Rebind(`INSERT INTO servers (account_id, name, display_name, status, location_id, plan_id, image_id, vcpus, memory_mb, disk_gb, created_at)
				VALUES (1, ?, 'm', 'running', 1, 1, 1, 1, 1024, 20, 0) RETURNING id`), fmt.Sprintf("server-mc%05d", made)).Scan(&ids[i]); err != nil {
				t.Fatal(err)
			}
		}
		return ids
	}
}
