package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/store/sqlstore/sqlstoretest"
	"github.com/berthhq/berth/internal/testdisk"
)

// TestFullDisk: a write on a full disk is answered hosting.Unavailable (503 at the
// edge, with Retry-After), and once space is back the very next write works: the
// store does not keep a broken writer, and nothing committed before is lost. A
// transaction of one small row fails in its commit (when the WAL grows); one of many
// big rows in a statement (when the page cache spills).
func TestFullDisk(t *testing.T) {
	t.Parallel()
	for _, rows := range []int{1, 20} {
		t.Run(fmt.Sprintf("%d rows a transaction", rows), func(t *testing.T) {
			t.Parallel()
			disk := testdisk.Mount(t, 8<<20)
			db := sqlstoretest.SQLite(t, disk.Dir)
			ctx := context.Background()
			now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
			var acct int64
			if err := db.InTx(ctx, func(tx store.Tx) error {
				var err error
				acct, err = tx.CreateAccount(ctx, hosting.Account{Email: "full@example.com", Name: "n", PasswordHash: "h", Language: "en",
					Currency: "EUR", Quotas: hosting.Quotas{Servers: 5}, CreatedAt: now})
				return err
			}); err != nil {
				t.Fatal(err)
			}
			written := 0
			projects := func(i int) func(tx store.Tx) error {
				return func(tx store.Tx) error {
					for j := range rows {
						if _, err := tx.CreateProject(ctx, hosting.Project{AccountID: acct, Name: fmt.Sprintf("p-%d-%d-%0900d", i, j, 0), CreatedAt: now}); err != nil {
							return err
						}
					}
					return nil
				}
			}
			disk.Fill(t)
			var failed error
			for i := range 2000 {
				if failed = db.InTx(ctx, projects(i)); failed != nil {
					break
				}
				written += rows
			}
			var he *hosting.Error
			if !errors.As(failed, &he) || he.Code != hosting.CodeUnavailable || he.RetryAfter <= 0 || he.Cause == nil {
				t.Fatalf("writes on a full disk: %v, want hosting.Unavailable with a cause and a Retry-After", failed)
			}
			disk.Free(t)
			if err := db.InTx(ctx, projects(-1)); err != nil {
				t.Fatalf("the first write once space is back: %v", err)
			}
			ps, err := db.Projects(ctx, acct)
			if err != nil || len(ps) != written+rows {
				t.Fatalf("%d projects, %v; want the %d written before the disk was full and the %d after", len(ps), err, written, rows)
			}
		})
	}
}
