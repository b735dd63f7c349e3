package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/netip"
	"slices"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// ---- what the operator's zones serve (docs/operating.md, DNS) ----

// serverNets are the networks servers.ipv4_net and ipv6_net hold for ipv4 and ipv6:
// the /24 and the /64 each is in, NULL for an address there is not.
func serverNets(ipv4, ipv6 string) (v4, v6 sql.NullString) {
	if a, err := netip.ParseAddr(ipv4); err == nil && a.Is4() {
		v4 = sql.NullString{String: netip.PrefixFrom(a, 24).Masked().String(), Valid: true}
	}
	if a, err := netip.ParseAddr(ipv6); err == nil && a.Is6() && !a.Is4In6() && a.Zone() == "" {
		v6 = sql.NullString{String: netip.PrefixFrom(a, 64).Masked().String(), Valid: true}
	}
	return v4, v6
}

func (q queries) ServerNamed(ctx context.Context, name string) (hosting.Server, error) {
	return scanServer(q.q.QueryRowContext(ctx, `SELECT `+serverCols+serverFrom+`WHERE s.deleted_at IS NULL AND s.name = ?`, name).Scan)
}

func (q queries) NetHasServer(ctx context.Context, p netip.Prefix) (bool, error) {
	col, err := netColumn(p)
	if err != nil {
		return false, err
	}
	var one int
	err = q.q.QueryRowContext(ctx, `SELECT 1 FROM servers WHERE `+col+` = ? AND deleted_at IS NULL LIMIT 1`,
		p.Masked().String()).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// netColumn is the column of servers that holds networks like p.
func netColumn(p netip.Prefix) (string, error) {
	switch {
	case p.Addr().Is4() && p.Bits() == 24:
		return "ipv4_net", nil
	case p.Addr().Is6() && p.Bits() == 64:
		return "ipv6_net", nil
	}
	return "", fmt.Errorf("store: %s is neither an IPv4 /24 nor an IPv6 /64", p)
}

func (q queries) AddressName(ctx context.Context, ip netip.Addr) (string, string, error) {
	ip = ip.Unmap()
	var server, ptr string
	err := q.q.QueryRowContext(ctx, `SELECT s.name, p.ptr FROM server_ptrs p JOIN servers s ON s.id = p.server_id
		WHERE p.ip = ? AND s.deleted_at IS NULL LIMIT 1`, ip.String()).Scan(&server, &ptr)
	if !errors.Is(err, sql.ErrNoRows) {
		return server, ptr, err
	}
	col, addr := "ipv4", "ipv4_net"
	bits := 24
	if ip.Is6() {
		col, addr, bits = "ipv6", "ipv6_net", 64
	}
	err = q.q.QueryRowContext(ctx, `SELECT name FROM servers WHERE `+addr+` = ? AND `+col+` = ? AND deleted_at IS NULL LIMIT 1`,
		netip.PrefixFrom(ip, bits).Masked().String(), ip.String()).Scan(&server)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", store.ErrNotFound
	}
	return server, "", err
}

// fillServerNets writes the networks of the live servers whose addresses were set
// before servers had ipv4_net and ipv6_net (migration 22 on SQLite, 16 on
// PostgreSQL); once done it finds none. An address that does not parse gets the
// empty network, which names none, so that it is not looked at again at every start.
// The updates go fillBatch to a transaction: one each took a million servers five
// minutes at a start.
func (db *DB) fillServerNets(ctx context.Context) error {
	w := on(db.d, db.write).q
	rows, err := w.QueryContext(ctx, `SELECT id, ipv4, ipv6 FROM servers
		WHERE deleted_at IS NULL AND ((ipv4 IS NOT NULL AND ipv4_net IS NULL) OR (ipv6 IS NOT NULL AND ipv6_net IS NULL))`)
	type row struct {
		id         int64
		ipv4, ipv6 sql.NullString
	}
	todo, err := collect(rows, err, func(sc func(...any) error) (r row, err error) { return r, sc(&r.id, &r.ipv4, &r.ipv6) })
	if err != nil {
		return fmt.Errorf("servers' networks: %w", err)
	}
	for batch := range slices.Chunk(todo, fillBatch) {
		err := func() error {
			tx, err := db.write.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			st, err := tx.PrepareContext(ctx, db.Rebind(`UPDATE servers SET ipv4_net = ?, ipv6_net = ? WHERE id = ?`))
			if err != nil {
				return err
			}
			defer st.Close()
			for _, r := range batch {
				v4, v6 := serverNets(r.ipv4.String, r.ipv6.String)
				v4.Valid = v4.Valid || r.ipv4.Valid
				v6.Valid = v6.Valid || r.ipv6.Valid
				if _, err := st.ExecContext(ctx, v4, v6, r.id); err != nil {
					return err
				}
			}
			return tx.Commit()
		}()
		if err != nil {
			return fmt.Errorf("servers' networks: %w", err)
		}
	}
	return nil
}

// fillBatch is how many servers' networks fillServerNets writes in a transaction.
const fillBatch = 1000

func (q queries) NetNames(ctx context.Context, p netip.Prefix) ([]store.AddressName, error) {
	col, err := netColumn(p)
	if err != nil {
		return nil, err
	}
	p = p.Masked()
	rows, err := q.q.QueryContext(ctx, `SELECT s.name, s.ipv4, s.ipv6, p.ip, p.ptr FROM servers s
		LEFT JOIN server_ptrs p ON p.server_id = s.id WHERE s.`+col+` = ? AND s.deleted_at IS NULL`, p.String())
	type row struct {
		name           string
		ipv4, ipv6, ip sql.NullString
		ptr            sql.NullString
	}
	got, err := collect(rows, err, func(sc func(...any) error) (row, error) {
		var r row
		err := sc(&r.name, &r.ipv4, &r.ipv6, &r.ip, &r.ptr)
		return r, err
	})
	if err != nil {
		return nil, err
	}
	byAddr := map[netip.Addr]store.AddressName{}
	for _, r := range got {
		own := r.ipv4
		if p.Addr().Is6() {
			own = r.ipv6
		}
		if a, err := netip.ParseAddr(own.String); err == nil && p.Contains(a) {
			if _, ok := byAddr[a]; !ok {
				byAddr[a] = store.AddressName{IP: a, Server: r.name}
			}
		}
		if a, err := netip.ParseAddr(r.ip.String); err == nil && r.ptr.Valid && p.Contains(a.Unmap()) {
			byAddr[a.Unmap()] = store.AddressName{IP: a.Unmap(), Server: r.name, PTR: r.ptr.String}
		}
	}
	out := make([]store.AddressName, 0, len(byAddr))
	for _, n := range byAddr {
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b store.AddressName) int { return a.IP.Compare(b.IP) })
	return out, nil
}

func (q queries) ZoneNames(ctx context.Context, after string, limit int) ([]string, error) {
	return orEmpty(column[string](ctx, q.q, `SELECT name FROM zones WHERE name > ? ORDER BY name LIMIT ?`, after, limit))
}

func (q queries) LiveServers(ctx context.Context, after int64, limit int) ([]hosting.Server, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT id, account_id, name, ipv4, ipv6 FROM servers
		WHERE deleted_at IS NULL AND id > ? ORDER BY id LIMIT ?`, after, limit)
	return orEmpty(collect(rows, err, func(sc func(...any) error) (hosting.Server, error) {
		var s hosting.Server
		var v4, v6 sql.NullString
		if err := sc(&s.ID, &s.AccountID, &s.Name, &v4, &v6); err != nil {
			return s, err
		}
		if v4.Valid && v4.String != "" {
			s.IPv4 = &v4.String
		}
		if v6.Valid && v6.String != "" {
			s.IPv6 = &v6.String
		}
		return s, nil
	}))
}

// The reads the nameserver makes for a name it has not cached (dnsserve) run prepared
// on the read pool (DB.stmt): under a flood of names never asked before, SQLite
// parsing and planning their text was half of berthd's CPU
// (bench/results/dns-2026-11-28.txt). EnclosingZone's text has one placeholder per
// label of the name asked, at most 127 texts.

// ServerNamed implements store.Reader, prepared.
func (db *DB) ServerNamed(ctx context.Context, name string) (hosting.Server, error) {
	return on(db.d, preparedReads{db}).ServerNamed(ctx, name)
}

// NetHasServer implements store.Reader, prepared.
func (db *DB) NetHasServer(ctx context.Context, p netip.Prefix) (bool, error) {
	return on(db.d, preparedReads{db}).NetHasServer(ctx, p)
}

// AddressName implements store.Reader, prepared.
func (db *DB) AddressName(ctx context.Context, ip netip.Addr) (string, string, error) {
	return on(db.d, preparedReads{db}).AddressName(ctx, ip)
}

// EnclosingZone implements store.Reader, prepared.
func (db *DB) EnclosingZone(ctx context.Context, name string) (hosting.Domain, error) {
	return on(db.d, preparedReads{db}).EnclosingZone(ctx, name)
}

// preparedReads is the read pool with each query run as a statement of DB.stmt. Its
// texts come rebound for the dialect (on's pgQuerier) and stay so.
type preparedReads struct{ db *DB }

func (p preparedReads) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := p.db.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (p preparedReads) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := p.db.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

func (p preparedReads) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := p.db.stmt(ctx, query)
	if err != nil {
		// The pool answers the same error through the row's Scan.
		return p.db.read.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}
