package sqlstore

import (
	"context"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/testpg"
)

// TestMeteringQueryPlans: the queries of a metering step, of a resource's meters and
// of a page of the ledger each read their index, on SQLite, for the rows they want
// alone: none walks a table, so none grows with the installation (issue 34).
func TestMeteringQueryPlans(t *testing.T) {
	t.Parallel()
	db := openMigratedSQLite(t)
	for _, tc := range []struct {
		name, query string
		args        []any
		want        string
	}{
		{"due accounts", dueAccountsQuery + ` ORDER BY next_due, id LIMIT ?`, []any{1, 256}, "SEARCH accounts USING COVERING INDEX accounts_next_due (next_due<?)"},
		{"an account's meters", passMetersQuery, []any{1, 1}, "SEARCH meters USING COVERING INDEX meters_account (account_id=? AND <expr>>?)"},
		{"a row's meters", rowMetersQuery, []any{1, 1, 2}, "SEARCH meters USING INDEX meters_account (account_id=? AND <expr>>?)"},
		{"a page of the ledger", pageQuery, []any{1, 100, 50}, "SEARCH transactions USING INDEX transactions_lines (account_id=? AND lines_before>? AND lines_before<?)"},
		{"a resource's latest meter", latestMeterQuery, []any{"server", 1}, "SEARCH meters USING INDEX meters_resource (resource_type=? AND resource_id=?)"},
	} {
		plan := sqlitePlan(t, db, tc.query, tc.args...)
		if len(plan) == 0 || plan[0] != tc.want || strings.Contains(strings.Join(plan, "\n"), "SCAN") {
			t.Errorf("%s: plan %q, want %q and no scan", tc.name, plan, tc.want)
		}
	}
}

// TestMeteringQueryPlansPostgres: on PostgreSQL a metering step reads an account's
// meters from meters_account alone (an Index Only Scan; before id and stopped_at
// were in the index, each meter cost a visit of the table's block). The planner is
// kept off the table's scans, which it would choose for a table this small.
func TestMeteringQueryPlansPostgres(t *testing.T) {
	t.Parallel()
	testpg.Require(t)
	ctx := context.Background()
	db, err := OpenPostgres(ctx, testpg.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	conn, err := db.write.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// An index-only scan needs the table's pages marked all-visible.
	for _, q := range []string{"VACUUM ANALYZE meters", "SET enable_seqscan = off", "SET enable_bitmapscan = off"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := conn.QueryContext(ctx, "EXPLAIN "+rebindPostgres(passMetersQuery), 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(plan) == 0 || !strings.HasPrefix(plan[0], "Index Only Scan using meters_account on meters") {
		t.Errorf("an account's meters: plan %q, want an Index Only Scan using meters_account", plan)
	}
}
