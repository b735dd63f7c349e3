package sqlstore

import (
	"strings"
	"testing"
)

// TestChargedReadsOneResource: what a resource was charged (Charged, read by the
// refunds of a failed provisioning, a volume never made, a failed license) is read
// through transactions_charge_once from that resource's rows, never by a walk of
// every charge of the installation, in SQLite's only write transaction (migration
// 00034). PostgreSQL's index has been led by the resource throughout.
func TestChargedReadsOneResource(t *testing.T) {
	t.Parallel()
	db := openMigratedSQLite(t)
	plan := sqlitePlan(t, db, chargedQuery, "server", 1)
	if len(plan) != 1 || plan[0] != "SEARCH transactions USING INDEX transactions_charge_once (resource_type=? AND resource_id=?)" {
		t.Errorf("Charged's plan is %q, want one SEARCH of transactions_charge_once by resource", plan)
	}
	if strings.Contains(strings.Join(plan, "\n"), "SCAN") {
		t.Errorf("Charged's plan scans: %q", plan)
	}
}
