package sqlstore_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/compute/libvirtdriver"
	"github.com/berthhq/berth/internal/compute/simdriver"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/store/sqlstore"
	"github.com/berthhq/berth/internal/store/sqlstore/sqlstoretest"
	"github.com/berthhq/berth/internal/testpg"
)

// drivers are the drivers whose tables the tests' databases hold, as berthd's are
// (internal/app).
func drivers() []compute.Storage {
	return []compute.Storage{simdriver.Storage(), libvirtdriver.Storage()}
}

// kind is one of the two databases, opened afresh for a test.
type kind struct {
	name string
	// open opens the database named by where (a data directory, a URL) with drivers.
	open func(t *testing.T, where string, drivers ...compute.Storage) *sqlstore.DB
	// fresh names a new, empty database.
	fresh func(t *testing.T) string
}

func kinds() []kind {
	return []kind{
		{name: "sqlite", fresh: func(t *testing.T) string { return t.TempDir() },
			open: func(t *testing.T, dir string, drivers ...compute.Storage) *sqlstore.DB {
				db, err := sqlstore.OpenSQLite(context.Background(), dir, drivers...)
				if err != nil {
					t.Fatal(err)
				}
				return db
			}},
		{name: "postgres", fresh: func(t *testing.T) string { testpg.Require(t); return testpg.NewDatabase(t) },
			open: func(t *testing.T, url string, drivers ...compute.Storage) *sqlstore.DB {
				db, err := sqlstore.OpenPostgres(context.Background(), url, drivers...)
				if err != nil {
					t.Fatal(err)
				}
				return db
			}},
	}
}

// migrated opens where with drivers and migrates it; it is closed when t ends.
func (k kind) migrated(t *testing.T, where string, drivers ...compute.Storage) *sqlstore.DB {
	t.Helper()
	db := k.open(t, where, drivers...)
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestUpgradeToDriverLines upgrades a database as Berth left it before the drivers'
// tables had migration lines of their own (the store's line alone made them, with
// the sim and libvirt drivers' rows in them) to the lines: every row is still there
// and read by the drivers, each driver's line is at its latest version without having
// changed anything, and the schema is the one a new database gets. Migrating it again,
// as the next start does, changes nothing. The database before is made as Berth made
// it then: a store opened without drivers runs the store's line alone, whose
// migrations are those Berth ran then, byte for byte (TestStoreMigrationsStayAsTheyRan).
func TestUpgradeToDriverLines(t *testing.T) {
	t.Parallel()
	for _, k := range kinds() {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			where := k.fresh(t)
			// Before: the store's migrations only, as Migrate ran them then.
			old := k.migrated(t, where)
			storeVersion, err := old.SchemaVersion(ctx)
			if err != nil {
				t.Fatal(err)
			}
			sim := simdriver.New(old.WriteDB(), 0, old.Rebind)
			var machines []compute.Machine
			for _, name := range []string{"server-up1", "server-up2", "server-up3"} {
				m, err := sim.Create(ctx, "create-"+name, compute.Spec{Name: name, VCPUs: 1, MemoryMB: 512, DiskGB: 10, Image: "image-1"})
				if err != nil {
					t.Fatal(err)
				}
				machines = append(machines, m)
			}
			// Destroyed as the driver did then: today's Destroy detaches volumes too,
			// whose table only the sim's line makes.
			if _, err := old.WriteDB().ExecContext(ctx, old.Rebind(`UPDATE sim_machines SET state = 'absent', destroyed_at = ? WHERE name = ?`), 1, "server-up2"); err != nil {
				t.Fatal(err)
			}
			// Snapshotted as the driver did then, too: today's Snapshot reads the
			// machine's volumes first.
			if _, err := old.WriteDB().ExecContext(ctx, old.Rebind(`INSERT INTO sim_snapshots
				(machine, name, memory, size_gb, vcpus, memory_mb, disk_gb, image, ready_at, created_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`), "server-up1", "snap-1", false, 4, 1, 512, 10, "image-1", 1, 1); err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{
				`INSERT INTO libvirt_hosts (id, location_id, uri, vcpus, memory_mb, disk_gb, pool, bridge, console_dir, created_at, accel, accel_mode)
					VALUES (4, 1, 'qemu+ssh://root@host-a/system', 16, 65536, 500, 'berth', 'br0', '', 1, 'kvm', 'auto')`,
				`INSERT INTO libvirt_machines (name, domain, host_id, location_id, vcpus, memory_mb, disk_gb, image, mac, ipv4, ipv6, created_at, network_mbps)
					VALUES ('server-lv', 'berth-server-lv', 4, 1, 2, 2048, 20, 'image-1', '52:54:00:00:00:01', '192.0.2.10/24', '2001:db8::10/64', 1, 100)`,
			} {
				if _, err := old.WriteDB().ExecContext(ctx, old.Rebind(q)); err != nil {
					t.Fatal(err)
				}
			}
			old.Close()

			up := k.migrated(t, where, drivers()...)
			if err := up.Ready(ctx); err != nil {
				t.Fatalf("Ready after the upgrade: %v", err)
			}
			if v, err := up.SchemaVersion(ctx); err != nil || v != storeVersion {
				t.Errorf("store's version %d, %v after the upgrade; want %d, unchanged", v, err, storeVersion)
			}
			for _, s := range drivers() {
				if v, want := lineVersion(t, up, s.Line), latestVersion(t, s); v != want {
					t.Errorf("line %s at version %d, want %d", s.Line, v, want)
				}
			}
			sim = simdriver.New(up.WriteDB(), 0, up.Rebind)
			for i, want := range machines {
				got, err := sim.Machine(ctx, want.Name)
				if i == 1 {
					if !errors.Is(err, compute.ErrNotFound) {
						t.Errorf("destroyed machine after the upgrade: %+v, %v", got, err)
					}
					continue
				}
				if err != nil || got != want {
					t.Errorf("machine %s after the upgrade = %+v, %v; want %+v", want.Name, got, err, want)
				}
			}
			if err := sim.Restore(ctx, "restore", "server-up1", "snap-1", compute.StateRunning); err != nil {
				t.Errorf("restoring a snapshot taken before the upgrade: %v", err)
			}
			hosts, err := libvirtdriver.New(up.WriteDB(), up.ReadDB(), up.Rebind, libvirtdriver.Options{}).Hosts(ctx, 0)
			if err != nil || len(hosts) != 1 || hosts[0].ID != 4 || hosts[0].Accel != "kvm" || hosts[0].Machines != 1 || hosts[0].UsedMemoryMB != 2048 {
				t.Errorf("libvirt hosts after the upgrade = %+v, %v; want host 4 (kvm) with its machine", hosts, err)
			}

			fresh := k.migrated(t, k.fresh(t), drivers()...)
			upgraded := schemaOf(t, up)
			if diff := schemaDiff(t, schemaOf(t, fresh), upgraded); diff != "" {
				t.Errorf("an upgraded database's schema is not a new one's:\n%s", diff)
			}

			// The next start migrates again: nothing changes, nothing is recorded.
			recorded := versionRows(t, up)
			up.Close()
			again := k.migrated(t, where, drivers()...)
			if diff := schemaDiff(t, upgraded, schemaOf(t, again)); diff != "" {
				t.Errorf("migrating an upgraded database again changed its schema:\n%s", diff)
			}
			if got := versionRows(t, again); !maps.Equal(got, recorded) {
				t.Errorf("migrating again recorded versions: %v, was %v", got, recorded)
			}
			if got, err := simdriver.New(again.WriteDB(), 0, again.Rebind).Machine(ctx, "server-up3"); err != nil || got != machines[2] {
				t.Errorf("machine server-up3 after migrating again = %+v, %v", got, err)
			}
		})
	}
}

// versionRows counts the rows of goose's version table of each line of db.
func versionRows(t *testing.T, db *sqlstore.DB) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, table := range []string{"goose_db_version", "goose_sim_version", "goose_libvirt_version"} {
		var n int
		if err := db.ReadDB().QueryRow(`SELECT COUNT(*) FROM ` + table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		out[table] = n
	}
	return out
}

// TestDriverLinesMakeTheirTables: a driver's line alone makes the tables the store's
// migrations made before the line began, column for column and index for index, so
// that the line says truly what the driver keeps (docs/drivers.md). The drivers'
// tables of a database migrated before the lines are dropped and the lines run.
func TestDriverLinesMakeTheirTables(t *testing.T) {
	t.Parallel()
	for _, k := range kinds() {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			where := k.fresh(t)
			old := k.migrated(t, where)
			all := drivers()
			for _, s := range slices.Backward(all) {
				for _, table := range slices.Backward(s.Tables) {
					if _, err := old.WriteDB().ExecContext(ctx, `DROP TABLE IF EXISTS `+table); err != nil {
						t.Fatal(err)
					}
				}
			}
			old.Close()
			byLines := k.migrated(t, where, all...)
			fresh := k.migrated(t, k.fresh(t), all...)
			if diff := schemaDiff(t, schemaOf(t, fresh), schemaOf(t, byLines)); diff != "" {
				t.Errorf("the drivers' lines make other tables than the store's migrations did:\n%s", diff)
			}
		})
	}
}

// A database whose driver's line is behind this build's is not ready, as one whose
// store's line is behind.
func TestReadyNeedsEveryLine(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqlstoretest.SQLite(t, t.TempDir(), drivers()...)
	if err := db.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.WriteDB().Exec(`DELETE FROM goose_libvirt_version WHERE version_id = (SELECT MAX(version_id) FROM goose_libvirt_version)`); err != nil {
		t.Fatal(err)
	}
	if err := db.Ready(ctx); !errors.Is(err, store.ErrNotMigrated) || !strings.Contains(err.Error(), "libvirt") {
		t.Errorf("Ready with the libvirt line behind = %v, want ErrNotMigrated naming the line", err)
	}
}

// latestVersion is the version of a driver's last migration.
func latestVersion(t *testing.T, s compute.Storage) int64 {
	t.Helper()
	files, err := fs.Glob(s.Migrations, compute.DialectSQLite+"/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("line %s: no migrations (%v)", s.Line, err)
	}
	var latest int64
	for _, f := range files {
		v, _, _ := strings.Cut(path.Base(f), "_")
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("line %s: migration %s", s.Line, f)
		}
		latest = max(latest, n)
	}
	return latest
}

// lineVersion is the version goose recorded for a driver's line.
func lineVersion(t *testing.T, db *sqlstore.DB, line string) int64 {
	t.Helper()
	var v int64
	if err := db.ReadDB().QueryRow(`SELECT MAX(version_id) FROM goose_` + line + `_version`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// schemaOf describes the schema of db, one line an object, from the database's own
// catalog: sqlite_master, or PostgreSQL's information_schema and pg_catalog. The text
// of a SQLite statement is normalized (comments, spacing, case, IF NOT EXISTS), so
// that a table made by CREATE TABLE reads as the same table made by a CREATE TABLE
// and ALTER TABLE ... ADD COLUMN (SQLite appends the column's text to the table's).
func schemaOf(t *testing.T, db *sqlstore.DB) []string {
	t.Helper()
	queries := []string{`SELECT type, name, tbl_name, COALESCE(sql, '') FROM sqlite_master`}
	if db.Postgres() {
		queries = []string{
			`SELECT table_name, column_name, ordinal_position::text, data_type || ' ' || is_nullable || ' ' ||
				COALESCE(column_default, '') || ' ' || is_identity || ' ' || COALESCE(identity_generation, '')
				FROM information_schema.columns WHERE table_schema = current_schema()`,
			`SELECT 'index', tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema()`,
			`SELECT 'constraint', conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint
				WHERE connamespace = current_schema()::regnamespace`,
			`SELECT 'sequence', sequence_name, data_type, start_value || ' ' || increment FROM information_schema.sequences
				WHERE sequence_schema = current_schema()`,
		}
	}
	var out []string
	for _, q := range queries {
		rows, err := db.ReadDB().Query(q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var a, b, c, d string
			if err := rows.Scan(&a, &b, &c, &d); err != nil {
				t.Fatal(err)
			}
			out = append(out, strings.Join([]string{a, b, c, normalSQL(d)}, " | "))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	slices.Sort(out)
	if len(out) < 20 {
		t.Fatalf("schema of %d objects: %v", len(out), out)
	}
	return out
}

var (
	sqlComment = regexp.MustCompile(`--[^\n]*`)
	sqlSpace   = regexp.MustCompile(`\s+`)
	sqlPunct   = regexp.MustCompile(`\s*([(),])\s*`)
)

func normalSQL(s string) string {
	s = sqlComment.ReplaceAllString(s, "")
	s = strings.ToLower(sqlSpace.ReplaceAllString(s, " "))
	s = strings.Replace(s, " if not exists ", " ", 1)
	return strings.TrimSpace(sqlPunct.ReplaceAllString(s, "$1"))
}

// schemaDiff lists the objects only one of two schemas has ("" when none).
func schemaDiff(t *testing.T, want, got []string) string {
	t.Helper()
	var b strings.Builder
	for _, w := range want {
		if !slices.Contains(got, w) {
			fmt.Fprintf(&b, "- %s\n", w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			fmt.Fprintf(&b, "+ %s\n", g)
		}
	}
	return b.String()
}

// TestStoreMigrationsStayAsTheyRan: the store's migrations that databases have run
// stay as they were, byte for byte. Every database migrated before the drivers had
// lines of their own got the drivers' tables from them (TestUpgradeToDriverLines
// builds such a database with them), and a migration that ran is never changed or
// removed: a change goes into a new migration of the line that owns the table. Only
// a comment may be reworded (goose runs a migration by its number, never again), its
// sum updated here in the same commit, as five were when they stopped citing files
// outside the repository.
func TestStoreMigrationsStayAsTheyRan(t *testing.T) {
	t.Parallel()
	f, err := os.Open(filepath.Join("testdata", "store-migrations.sha256"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("line %q", sc.Text())
		}
		data, err := os.ReadFile(filepath.Join("migrations", name))
		if err != nil {
			t.Errorf("migration %s that databases ran is gone: %v", name, err)
			continue
		}
		if got := fmt.Sprintf("%x", sha256.Sum256(data)); got != sum {
			t.Errorf("migration %s that databases ran has changed (sha256 %s, was %s)", name, got, sum)
		}
		n++
	}
	if err := sc.Err(); err != nil || n < 26 {
		t.Fatalf("%d migrations checked, %v", n, err)
	}
}
