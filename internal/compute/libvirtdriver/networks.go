package libvirtdriver

import (
	"context"
	"net/netip"
)

// Networks implements compute.Networks: the networks of every address pool, and
// their IPv6 prefixes.
func (d *Driver) Networks(ctx context.Context) ([]netip.Prefix, error) {
	ps, err := d.Pools(ctx, 0)
	if err != nil {
		return nil, err
	}
	var out []netip.Prefix
	for _, p := range ps {
		for _, s := range []string{p.CIDR, p.IPv6Prefix} {
			if pfx, err := netip.ParsePrefix(s); err == nil {
				out = append(out, pfx)
			}
		}
	}
	return out, nil
}
