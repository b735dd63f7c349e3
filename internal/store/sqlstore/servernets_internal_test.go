package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
)

// fillServerNets, which a start runs, gives every live server with addresses but no
// networks its networks, more than a transaction's worth of them; an address that
// does not parse gets the empty network, so that the next start finds nothing to do
// (it once updated such servers one by one at every start: five minutes for a
// million).
func TestFillServerNets(t *testing.T) {
	t.Parallel()
	db := openMigratedSQLite(t)
	ctx := context.Background()
	n := fillBatch + 3
	stmts := []string{
		`PRAGMA foreign_keys = OFF`, // no plans or images: the rows only need to be there
		`INSERT INTO accounts (id, email, name, password_hash, language, currency, credit, blocked, server_quota, created_at) VALUES (1, 'a@example.com', 'a', '', 'en', 'EUR', 0, 0, 5, 0)`,
	}
	for i := 1; i <= n; i++ {
		v4, v6 := fmt.Sprintf("'192.0.%d.%d'", i/256, i%256), fmt.Sprintf("'2001:db8:%x::1'", i)
		switch i {
		case 1:
			v6 = "'2001:db8:10000::1'" // five hex digits: not an address
		case 2:
			v4, v6 = "''", "NULL"
		case 3:
			v4 = "NULL"
		}
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO servers (id, account_id, name, display_name, status, location_id, plan_id, image_id,
			vcpus, memory_mb, disk_gb, root_pass_hash, ssh_key_ids, created_at, ipv4, ipv6)
			VALUES (%d, 1, 'server-%06d', 'a', 'running', 1, 1, 1, 1, 1024, 20, '', '', 0, %s, %s)`, i, i, v4, v6))
	}
	stmts = append(stmts, `PRAGMA foreign_keys = ON`)
	for _, q := range stmts {
		if _, err := db.write.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := db.fillServerNets(ctx); err != nil {
		t.Fatal(err)
	}
	nets := func(id int) (v4, v6 sql.NullString) {
		t.Helper()
		if err := db.write.QueryRowContext(ctx, `SELECT ipv4_net, ipv6_net FROM servers WHERE id = ?`, id).Scan(&v4, &v6); err != nil {
			t.Fatal(err)
		}
		return v4, v6
	}
	for _, tc := range []struct {
		id     int
		v4, v6 sql.NullString
	}{
		{1, sql.NullString{String: "192.0.0.0/24", Valid: true}, sql.NullString{Valid: true}},
		{2, sql.NullString{Valid: true}, sql.NullString{}},
		{3, sql.NullString{}, sql.NullString{String: "2001:db8:3::/64", Valid: true}},
		{n, sql.NullString{String: fmt.Sprintf("192.0.%d.0/24", n/256), Valid: true},
			sql.NullString{String: fmt.Sprintf("2001:db8:%x::/64", n), Valid: true}},
	} {
		if v4, v6 := nets(tc.id); v4 != tc.v4 || v6 != tc.v6 {
			t.Errorf("server %d: networks %v %v, want %v %v", tc.id, v4, v6, tc.v4, tc.v6)
		}
	}
	var left int
	if err := db.write.QueryRowContext(ctx, `SELECT COUNT(*) FROM servers WHERE deleted_at IS NULL
		AND ((ipv4 IS NOT NULL AND ipv4_net IS NULL) OR (ipv6 IS NOT NULL AND ipv6_net IS NULL))`).Scan(&left); err != nil || left != 0 {
		t.Errorf("servers a next start would fill: %d, %v", left, err)
	}
}
