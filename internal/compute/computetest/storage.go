package computetest

import (
	"context"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/store/sqlstore"
	"github.com/berthhq/berth/internal/testpg"
)

// lineName is what a line may be called: it names goose's version table of the line
// and starts the names of the driver's tables.
var lineName = regexp.MustCompile(`^[a-z][a-z0-9]*$`)

// ExerciseStorage checks what a driver keeps in Berth's database (docs/drivers.md):
// its line has migrations of the same versions for SQLite and PostgreSQL, its tables
// are named after the line, and migrating a store opened with it (twice, as every
// start does) makes every table it lists, on SQLite and, when a test server is
// configured, on PostgreSQL.
func ExerciseStorage(t *testing.T, s compute.Storage) {
	if !lineName.MatchString(s.Line) {
		t.Fatalf("line %q: want lower-case letters and digits", s.Line)
	}
	if len(s.Tables) == 0 {
		t.Fatalf("line %s lists no tables", s.Line)
	}
	for _, table := range s.Tables {
		if !strings.HasPrefix(table, s.Line+"_") {
			t.Errorf("table %s of line %s: a driver's tables start with its line's name and _", table, s.Line)
		}
	}
	versions := map[string][]string{}
	for _, dialect := range []string{compute.DialectSQLite, compute.DialectPostgres} {
		files, err := fs.Glob(s.Migrations, dialect+"/*.sql")
		if err != nil || len(files) == 0 {
			t.Fatalf("line %s: no migrations in %s/ (%v)", s.Line, dialect, err)
		}
		for _, f := range files {
			v, _, _ := strings.Cut(strings.TrimPrefix(f, dialect+"/"), "_")
			versions[dialect] = append(versions[dialect], v)
		}
	}
	if a, b := versions[compute.DialectSQLite], versions[compute.DialectPostgres]; !slices.Equal(a, b) {
		t.Errorf("line %s: versions %v for SQLite, %v for PostgreSQL; want the same", s.Line, a, b)
	}

	t.Run("SQLite", func(t *testing.T) {
		dir := t.TempDir()
		migrateTwice(t, s, func() (*sqlstore.DB, error) { return sqlstore.OpenSQLite(context.Background(), dir, s) })
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		testpg.Require(t)
		url := testpg.NewDatabase(t)
		migrateTwice(t, s, func() (*sqlstore.DB, error) { return sqlstore.OpenPostgres(context.Background(), url, s) })
	})
}

func migrateTwice(t *testing.T, s compute.Storage, open func() (*sqlstore.DB, error)) {
	t.Helper()
	ctx := context.Background()
	for range 2 {
		db, err := open()
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Migrate(ctx); err != nil {
			db.Close()
			t.Fatal(err)
		}
		if err := db.Ready(ctx); err != nil {
			t.Errorf("Ready after migrating: %v", err)
		}
		tables, err := db.Tables(ctx)
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, table := range s.Tables {
			if !slices.Contains(tables, table) {
				t.Errorf("table %s of line %s is not in the migrated database", table, s.Line)
			}
		}
	}
}
