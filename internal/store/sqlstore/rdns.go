package sqlstore

import (
	"context"
	"net/netip"
	"slices"
	"strings"

	"github.com/berthhq/berth/internal/hosting"
)

// ---- reverse DNS (issue 30; docs/api.md, Domains) ----

func (q queries) PTRs(ctx context.Context, serverID int64) ([]hosting.PTR, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT server_id, ip, ptr FROM server_ptrs WHERE server_id = ?`, serverID)
	ptrs, err := orEmpty(collect(rows, err, func(sc func(...any) error) (p hosting.PTR, err error) {
		return p, sc(&p.ServerID, &p.IP, &p.PTR)
	}))
	slices.SortFunc(ptrs, func(a, b hosting.PTR) int {
		x, errA := netip.ParseAddr(a.IP)
		y, errB := netip.ParseAddr(b.IP)
		if errA != nil || errB != nil {
			return strings.Compare(a.IP, b.IP)
		}
		return x.Compare(y) // IPv4 before IPv6
	})
	return ptrs, err
}

func (q queries) SetPTR(ctx context.Context, p hosting.PTR) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO server_ptrs (server_id, ip, ptr) VALUES (?, ?, ?)
		ON CONFLICT (server_id, ip) DO UPDATE SET ptr = excluded.ptr`, p.ServerID, p.IP, p.PTR)
	return conflict(err)
}

func (q queries) DeletePTR(ctx context.Context, serverID int64, ip string) error {
	_, err := q.q.ExecContext(ctx, `DELETE FROM server_ptrs WHERE server_id = ? AND ip = ?`, serverID, ip)
	return err
}

// dropLostPTRs removes the PTRs of a server's addresses that are no longer among
// ipv4 and ipv6's /64 (hosting.ServerHasAddress): an address that leaves a server
// loses its name.
func (q queries) dropLostPTRs(ctx context.Context, serverID int64, ipv4, ipv6 string) error {
	ptrs, err := q.PTRs(ctx, serverID)
	if err != nil {
		return err
	}
	for _, p := range ptrs {
		if !hosting.ServerHasAddress(ipv4, ipv6, p.IP) {
			if err := q.DeletePTR(ctx, serverID, p.IP); err != nil {
				return err
			}
		}
	}
	return nil
}
