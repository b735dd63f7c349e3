package sqlstore

import (
	"context"
	"strings"
	"testing"
)

// TestZoneRelatedUsesIndexes: the check before a zone is added reads the zones' unique
// names and one range of the rname index, never every zone (its cost must not grow
// with the installation); rname orders a name's children right after it.
func TestZoneRelatedUsesIndexes(t *testing.T) {
	t.Parallel()
	db := openMigratedSQLite(t)
	plan := sqlitePlan(t, db, zoneRelatedQuery(3), "a.example.com", "example.com", "com", "com.example.a.", "com.example.a/")
	for _, d := range plan {
		if strings.HasPrefix(d, "SCAN zones") {
			t.Errorf("the plan scans every zone: %q in %q", d, plan)
		}
	}
	if got := rname("www.example.com"); got != "com.example.www." {
		t.Errorf("rname = %q", got)
	}
}

// sqlitePlan is SQLite's plan of query (EXPLAIN QUERY PLAN), a line a step.
func sqlitePlan(t *testing.T, db *DB, query string, args ...any) []string {
	t.Helper()
	rows, err := db.write.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan
}
