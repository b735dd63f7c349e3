package sqlstore

import (
	"context"
	"database/sql"
	"strings"

	"github.com/berthhq/berth/internal/hosting"
)

const planCols = `p.id, p.name, p.vcpus, p.memory_mb, p.disk_gb, p.price_hourly, p.price_monthly, p.network_mbps, p.disk_iops, p.disk_mbps`

func scanPlan(sc func(...any) error, extra ...any) (hosting.Plan, error) {
	var p hosting.Plan
	var ph, pm int64
	var net, iops, mbps sql.NullInt64 // NULL: no limit
	if err := sc(append([]any{&p.ID, &p.Name, &p.VCPUs, &p.MemoryMB, &p.DiskGB, &ph, &pm, &net, &iops, &mbps}, extra...)...); err != nil {
		return p, notFound(err)
	}
	p.PriceHourly, p.PriceMonthly = hosting.Money(ph), hosting.Money(pm)
	p.NetworkMbps, p.DiskIOPS, p.DiskMBps = int(net.Int64), int(iops.Int64), int(mbps.Int64)
	return p, nil
}

// limit is a plan's limit as stored: NULL for none.
func limit(v int) sql.NullInt64 { return sql.NullInt64{Int64: int64(v), Valid: v > 0} }

func (q queries) Plan(ctx context.Context, id int64) (hosting.Plan, error) {
	return scanPlan(q.q.QueryRowContext(ctx, `SELECT `+planCols+` FROM plans p WHERE p.id = ? AND p.active = 1`, id).Scan)
}

func (q queries) PlanAny(ctx context.Context, id int64) (hosting.Plan, error) {
	return scanPlan(q.q.QueryRowContext(ctx, `SELECT `+planCols+` FROM plans p WHERE p.id = ?`, id).Scan)
}

func (q queries) Image(ctx context.Context, id int64) (hosting.Image, error) {
	var i hosting.Image
	err := q.q.QueryRowContext(ctx, `SELECT id, name, os, version FROM images WHERE id = ? AND active = 1`, id).Scan(&i.ID, &i.Name, &i.OS, &i.Version)
	return i, notFound(err)
}

func (q queries) App(ctx context.Context, id int64) (hosting.App, error) {
	var a hosting.App
	err := q.q.QueryRowContext(ctx, `SELECT id, name, description, version, script FROM apps WHERE id = ? AND active = 1`, id).
		Scan(&a.ID, &a.Name, &a.Description, &a.Version, &a.Script)
	return a, notFound(err)
}

func (q queries) Apps(ctx context.Context) ([]hosting.App, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT id, name, description, version, script FROM apps WHERE active = 1 ORDER BY id`)
	return collect(rows, err, func(sc func(...any) error) (a hosting.App, err error) {
		err = sc(&a.ID, &a.Name, &a.Description, &a.Version, &a.Script)
		return a, err
	})
}

func (q queries) Locations(ctx context.Context) ([]hosting.Location, error) {
	return q.locations(ctx, nil)
}

func (q queries) Location(ctx context.Context, id int64) (hosting.Location, error) {
	ls, err := q.locations(ctx, &id)
	if err != nil {
		return hosting.Location{}, err
	}
	if len(ls) == 0 {
		return hosting.Location{}, notFound(sql.ErrNoRows)
	}
	return ls[0], nil
}

// locations reads active locations (all, or the one with *id) with their plans and
// images. An id of 0 is no location (never "any": {"location_id": 0} would order in
// the first).
func (q queries) locations(ctx context.Context, id *int64) ([]hosting.Location, error) {
	only := func(col string) (string, []any) {
		if id == nil {
			return "", nil
		}
		return " AND " + col + " = ?", []any{*id}
	}
	where, args := only("id")
	rows, err := q.q.QueryContext(ctx, `SELECT id, name, city, country, snapshot_price_gb_hour, volume_price_gb_hour,
		volume_price_gb_month FROM locations WHERE active = 1`+where+` ORDER BY id`, args...)
	out, err := collect(rows, err, func(sc func(...any) error) (l hosting.Location, err error) {
		var price, vh, vm int64
		if err = sc(&l.ID, &l.Name, &l.City, &l.Country, &price, &vh, &vm); err != nil {
			return l, err
		}
		l.SnapshotPriceGBHour, l.VolumePriceGBHour, l.VolumePriceGBMonth = hosting.Money(price), hosting.Money(vh), hosting.Money(vm)
		return l, nil
	})
	if err != nil {
		return nil, err
	}
	idx := map[int64]int{}
	for i, l := range out {
		idx[l.ID] = i
	}
	// Each plan and image is read with the location that offers it.
	type locatedPlan struct {
		loc  int64
		plan hosting.Plan
	}
	where, args = only("lp.location_id")
	rows, err = q.q.QueryContext(ctx, `SELECT `+planCols+`, lp.location_id, lp.capacity FROM location_plans lp
		JOIN plans p ON p.id = lp.plan_id WHERE p.active = 1`+where+` ORDER BY lp.location_id, p.price_hourly, p.id`, args...)
	plans, err := collect(rows, err, func(sc func(...any) error) (lp locatedPlan, err error) {
		var capacity sql.NullInt64
		if lp.plan, err = scanPlan(sc, &lp.loc, &capacity); err != nil {
			return lp, err
		}
		if capacity.Valid {
			c := int(capacity.Int64)
			lp.plan.Capacity = &c
		}
		return lp, nil
	})
	if err != nil {
		return nil, err
	}
	for _, lp := range plans {
		if i, ok := idx[lp.loc]; ok {
			out[i].Plans = append(out[i].Plans, lp.plan)
		}
	}
	type locatedImage struct {
		loc   int64
		image hosting.Image
	}
	where, args = only("li.location_id")
	rows, err = q.q.QueryContext(ctx, `SELECT li.location_id, i.id, i.name, i.os, i.version FROM location_images li
		JOIN images i ON i.id = li.image_id WHERE i.active = 1`+where+` ORDER BY li.location_id, i.id`, args...)
	images, err := collect(rows, err, func(sc func(...any) error) (li locatedImage, err error) {
		err = sc(&li.loc, &li.image.ID, &li.image.Name, &li.image.OS, &li.image.Version)
		return li, err
	})
	if err != nil {
		return nil, err
	}
	for _, li := range images {
		if i, ok := idx[li.loc]; ok {
			out[i].Images = append(out[i].Images, li.image)
		}
	}
	return out, nil
}

func (q queries) ServersOfPlan(ctx context.Context, locationID, planID int64) (int, error) {
	if q.tx && q.d == dialectPostgres {
		// A transaction counts to decide whether one more fits: no other may count
		// the same offer until it ends (SQLite's write transactions run one at a time).
		if _, err := q.q.ExecContext(ctx, `SELECT 1 FROM location_plans WHERE location_id = ? AND plan_id = ? FOR UPDATE`,
			locationID, planID); err != nil {
			return 0, err
		}
	}
	var n int
	// A rescale to the plan holds its place from when it is accepted.
	err := q.q.QueryRowContext(ctx, `SELECT
		(SELECT COUNT(*) FROM servers WHERE location_id = ? AND plan_id = ? AND deleted_at IS NULL) +
		(SELECT COUNT(*) FROM operations o JOIN servers s ON s.id = o.server_id
		  WHERE o.status = 'running' AND o.type = 'rescale' AND o.plan_id = ? AND s.location_id = ? AND s.plan_id <> o.plan_id)`,
		locationID, planID, planID, locationID).Scan(&n)
	return n, err
}

// ApplyCatalog upserts every item by id, retires (active = 0) what the catalog no
// longer lists, and replaces what each location offers. Nothing is deleted, so
// servers keep their plan, image and app.
func (q queries) ApplyCatalog(ctx context.Context, c hosting.Catalog) error {
	for _, t := range []string{"locations", "plans", "images", "apps", "licenses"} {
		if _, err := q.q.ExecContext(ctx, `UPDATE `+t+` SET active = 0`); err != nil {
			return err
		}
	}
	for _, p := range c.Plans {
		if _, err := q.q.ExecContext(ctx, `INSERT INTO plans (id, name, vcpus, memory_mb, disk_gb, price_hourly, price_monthly, network_mbps, disk_iops, disk_mbps, active)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)
			ON CONFLICT (id) DO UPDATE SET name = excluded.name, vcpus = excluded.vcpus, memory_mb = excluded.memory_mb, disk_gb = excluded.disk_gb,
			price_hourly = excluded.price_hourly, price_monthly = excluded.price_monthly, network_mbps = excluded.network_mbps,
			disk_iops = excluded.disk_iops, disk_mbps = excluded.disk_mbps, active = 1`,
			p.ID, p.Name, p.VCPUs, p.MemoryMB, p.DiskGB, int64(p.PriceHourly), int64(p.PriceMonthly),
			limit(p.NetworkMbps), limit(p.DiskIOPS), limit(p.DiskMBps)); err != nil {
			return err
		}
	}
	for _, i := range c.Images {
		if _, err := q.q.ExecContext(ctx, `INSERT INTO images (id, name, os, version, active) VALUES (?, ?, ?, ?, 1)
			ON CONFLICT (id) DO UPDATE SET name = excluded.name, os = excluded.os, version = excluded.version, active = 1`,
			i.ID, i.Name, i.OS, i.Version); err != nil {
			return err
		}
	}
	for _, a := range c.Apps {
		if _, err := q.q.ExecContext(ctx, `INSERT INTO apps (id, name, description, version, script, active) VALUES (?, ?, ?, ?, ?, 1)
			ON CONFLICT (id) DO UPDATE SET name = excluded.name, description = excluded.description, version = excluded.version, script = excluded.script, active = 1`,
			a.ID, a.Name, a.Description, a.Version, a.Script); err != nil {
			return err
		}
	}
	if _, err := q.q.ExecContext(ctx, `DELETE FROM license_images`); err != nil {
		return err
	}
	for _, l := range c.Licenses {
		var hookURL, hookSecrets string
		if l.Hook != nil {
			hookURL, hookSecrets = l.Hook.URL, strings.Join(l.Hook.Secrets, "\n")
		}
		if _, err := q.q.ExecContext(ctx, `INSERT INTO licenses (id, name, vendor, per, price_monthly, provisioning, webhook_url, webhook_secrets, active)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1)
			ON CONFLICT (id) DO UPDATE SET name = excluded.name, vendor = excluded.vendor, per = excluded.per,
			price_monthly = excluded.price_monthly, provisioning = excluded.provisioning, webhook_url = excluded.webhook_url,
			webhook_secrets = excluded.webhook_secrets, active = 1`,
			l.ID, l.Name, l.Vendor, string(l.Per), int64(l.PriceMonthly), string(l.Provisioning), hookURL, hookSecrets); err != nil {
			return err
		}
		for _, id := range l.ImageIDs {
			if _, err := q.q.ExecContext(ctx, `INSERT INTO license_images (license_id, image_id) VALUES (?, ?)`, l.ID, id); err != nil {
				return err
			}
		}
	}
	if _, err := q.q.ExecContext(ctx, `DELETE FROM location_plans`); err != nil {
		return err
	}
	if _, err := q.q.ExecContext(ctx, `DELETE FROM location_images`); err != nil {
		return err
	}
	for _, l := range c.Locations {
		if _, err := q.q.ExecContext(ctx, `INSERT INTO locations (id, name, city, country, snapshot_price_gb_hour,
			volume_price_gb_hour, volume_price_gb_month, active) VALUES (?, ?, ?, ?, ?, ?, ?, 1)
			ON CONFLICT (id) DO UPDATE SET name = excluded.name, city = excluded.city, country = excluded.country,
			snapshot_price_gb_hour = excluded.snapshot_price_gb_hour, volume_price_gb_hour = excluded.volume_price_gb_hour,
			volume_price_gb_month = excluded.volume_price_gb_month, active = 1`,
			l.ID, l.Name, l.City, l.Country, int64(l.SnapshotPriceGBHour), int64(l.VolumePriceGBHour), int64(l.VolumePriceGBMonth)); err != nil {
			return err
		}
		for _, o := range l.Offers {
			var capacity any
			if o.Capacity != nil {
				capacity = *o.Capacity
			}
			if _, err := q.q.ExecContext(ctx, `INSERT INTO location_plans (location_id, plan_id, capacity) VALUES (?, ?, ?)`, l.ID, o.PlanID, capacity); err != nil {
				return err
			}
		}
		for _, id := range l.ImageIDs {
			if _, err := q.q.ExecContext(ctx, `INSERT INTO location_images (location_id, image_id) VALUES (?, ?)`, l.ID, id); err != nil {
				return err
			}
		}
	}
	return nil
}
