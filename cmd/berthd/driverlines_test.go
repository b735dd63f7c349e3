package main

import (
	"database/sql"
	"fmt"
	"io/fs"
	"maps"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/compute/libvirtdriver"
	"github.com/berthhq/berth/internal/compute/simdriver"
	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/testnet"
	"github.com/berthhq/berth/internal/testpg"
)

// lineRows describes goose's version tables of the drivers' lines in db: the rows of
// each version, which a line records once (docs/drivers.md).
func lineRows(t *testing.T, db *sql.DB) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, line := range []string{"sim", "libvirt"} {
		rows, err := db.Query(`SELECT version_id, COUNT(*) FROM goose_` + line + `_version WHERE is_applied
			GROUP BY version_id ORDER BY version_id`)
		if err != nil {
			t.Fatalf("line %s: %v", line, err)
		}
		var b strings.Builder
		for rows.Next() {
			var v, n int64
			if err := rows.Scan(&v, &n); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%d×%d ", v, n)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		out[line] = strings.TrimSpace(b.String())
	}
	return out
}

// TestMigrateRunsDriverLines: berthd migrate runs every driver's migration line after
// the store's, on the test's store, and running it again records nothing; three
// processes migrating a new PostgreSQL database at once all succeed and record each
// version once, the drivers' lines under the store's migration lock as the store's
// line is; and serve --driver with a name no driver has is refused with the names the
// build knows.
func TestMigrateRunsDriverLines(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	// Each line records version 0 and each of its migrations once.
	want := map[string]string{}
	for _, st := range []compute.Storage{simdriver.Storage(), libvirtdriver.Storage()} {
		files, err := fs.Glob(st.Migrations, compute.DialectSQLite+"/*.sql")
		if err != nil || len(files) == 0 {
			t.Fatalf("%s's migrations: %v, %v", st.Line, files, err)
		}
		rows := []string{"0×1"}
		for i := range files {
			rows = append(rows, fmt.Sprintf("%d×1", i+1))
		}
		want[st.Line] = strings.Join(rows, " ")
	}

	data := t.TempDir()
	runJSON(t, bin, append([]string{"migrate"}, storeFlags(t, data)...)...)
	db, _, _ := storeDB(t, data)
	if got := lineRows(t, db); !maps.Equal(got, want) {
		t.Errorf("lines after migrate: %v, want %v", got, want)
	}
	runJSON(t, bin, append([]string{"migrate"}, storeFlags(t, data)...)...)
	if got := lineRows(t, db); !maps.Equal(got, want) {
		t.Errorf("lines after migrating again: %v, want %v", got, want)
	}

	msg := runError(t, bin, append([]string{"serve", "--driver", "vmware", "--addr", testnet.FreeAddr(t)}, storeFlags(t, data)...)...)
	if !strings.Contains(msg, `unknown driver "vmware" (this build knows: sim, libvirt)`) {
		t.Errorf("serve --driver vmware: %q, want the drivers this build knows", msg)
	}

	t.Run("ThreeAtOnceOnPostgreSQL", func(t *testing.T) {
		testpg.Require(t)
		t.Parallel()
		u := testpg.NewDatabase(t)
		var wg sync.WaitGroup
		outs, errs := make([][]byte, 3), make([]error, 3)
		for i := range 3 {
			wg.Go(func() { outs[i], errs[i] = exec.Command(bin, "migrate", "--database", u).CombinedOutput() })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil || !strings.Contains(string(outs[i]), `"migrated":true`) {
				t.Errorf("berthd migrate %d of 3: %v\n%s", i+1, err, outs[i])
			}
		}
		db, err := sql.Open("pgx", u)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if got := lineRows(t, db); !maps.Equal(got, want) {
			t.Errorf("lines after three processes migrated at once: %v, want %v", got, want)
		}
	})
}
