package sqlstore

import (
	"strings"
	"testing"
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
