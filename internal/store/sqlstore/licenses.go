package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// ---- licenses (docs/api.md, Licenses) ----

// licenses reads the active license products (all, or the one of id when id is not
// nil) with the images that require each and whether a server can take one now.
func (q queries) licenses(ctx context.Context, id *int64) ([]hosting.License, error) {
	where, args := "", []any{}
	if id != nil {
		where, args = " AND l.id = ?", []any{*id}
	}
	rows, err := q.q.QueryContext(ctx, `SELECT l.id, l.name, l.vendor, l.per, l.price_monthly, l.provisioning,
		l.provisioning <> 'key_pool' OR EXISTS (SELECT 1 FROM license_keys k WHERE k.license_id = l.id AND k.server_license_id IS NULL)
		FROM licenses l WHERE l.active = 1`+where+` ORDER BY l.id`, args...)
	out, err := collect(rows, err, func(sc func(...any) error) (l hosting.License, err error) {
		var price int64
		err = sc(&l.ID, &l.Name, &l.Vendor, &l.Per, &price, &l.Provisioning, &l.InStock)
		l.PriceMonthly, l.ImageIDs = hosting.Money(price), []int64{}
		return l, err
	})
	if err != nil || len(out) == 0 {
		return out, err
	}
	idx := map[int64]int{}
	for i, l := range out {
		idx[l.ID] = i
	}
	where = ""
	if id != nil {
		where = " WHERE license_id = ?"
	}
	rows, err = q.q.QueryContext(ctx, `SELECT license_id, image_id FROM license_images`+where+` ORDER BY license_id, image_id`, args...)
	pairs, err := collect(rows, err, func(sc func(...any) error) (p [2]int64, err error) {
		err = sc(&p[0], &p[1])
		return p, err
	})
	for _, p := range pairs {
		if i, ok := idx[p[0]]; ok {
			out[i].ImageIDs = append(out[i].ImageIDs, p[1])
		}
	}
	return out, err
}

func (q queries) Licenses(ctx context.Context) ([]hosting.License, error) {
	return orEmpty(q.licenses(ctx, nil))
}

func (q queries) License(ctx context.Context, id int64) (hosting.License, error) {
	ls, err := q.licenses(ctx, &id)
	if err != nil {
		return hosting.License{}, err
	}
	if len(ls) == 0 {
		return hosting.License{}, store.ErrNotFound
	}
	return ls[0], nil
}

const serverLicenseCols = `sl.id, sl.account_id, sl.server_id, sl.license_id, sl.name, sl.status, sl.started_at, sl.paid_through,
	sl.charged_vcpus, sl.cancelled_at, k.sealed`

const serverLicenseFrom = ` FROM server_licenses sl LEFT JOIN license_keys k ON k.server_license_id = sl.id `

func scanServerLicense(sc func(...any) error) (hosting.ServerLicense, error) {
	var l hosting.ServerLicense
	var started, paid int64
	var cancelled sql.NullInt64
	if err := sc(&l.ID, &l.AccountID, &l.ServerID, &l.LicenseID, &l.Name, &l.Status, &started, &paid, &l.ChargedVCPUs,
		&cancelled, &l.SealedKey); err != nil {
		return l, notFound(err)
	}
	l.StartedAt, l.PaidThrough, l.CancelledAt = fromMS(started), fromMS(paid), fromNullMS(cancelled)
	return l, nil
}

func (q queries) ServerLicenses(ctx context.Context, serverID int64, at time.Time) ([]hosting.ServerLicense, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+serverLicenseCols+serverLicenseFrom+`WHERE sl.server_id = ?
		AND (sl.status <> 'cancelled' OR sl.paid_through > ?) ORDER BY sl.id`, serverID, ms(at))
	return orEmpty(collect(rows, err, scanServerLicense))
}

func (q queries) ServerLicense(ctx context.Context, serverID, id int64) (hosting.ServerLicense, error) {
	return scanServerLicense(q.q.QueryRowContext(ctx, `SELECT `+serverLicenseCols+serverLicenseFrom+
		`WHERE sl.server_id = ? AND sl.id = ?`, serverID, id).Scan)
}

func (q queries) AddServerLicense(ctx context.Context, l hosting.ServerLicense) (int64, error) {
	return q.insert(ctx, `INSERT INTO server_licenses (account_id, server_id, license_id, name, status, started_at, paid_through,
		charged_vcpus) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, l.AccountID, l.ServerID, l.LicenseID, l.Name, string(l.Status),
		ms(l.StartedAt), ms(l.PaidThrough), l.ChargedVCPUs)
}

func (q queries) TakeLicenseKey(ctx context.Context, licenseID, serverLicenseID int64) ([]byte, error) {
	// The free key of lowest id; on PostgreSQL one that no other transaction is
	// taking (it would wait for that one, then find the key taken).
	lock := ""
	if q.d == dialectPostgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	var sealed []byte
	err := q.q.QueryRowContext(ctx, `UPDATE license_keys SET server_license_id = ?
		WHERE server_license_id IS NULL AND id = (SELECT id FROM license_keys WHERE license_id = ? AND server_license_id IS NULL
			ORDER BY id LIMIT 1`+lock+`) RETURNING sealed`, serverLicenseID, licenseID).Scan(&sealed)
	return sealed, notFound(err)
}

func (q queries) CancelServerLicense(ctx context.Context, id int64, at time.Time) error {
	if _, err := q.q.ExecContext(ctx, `UPDATE license_keys SET server_license_id = NULL WHERE server_license_id = ?`, id); err != nil {
		return err
	}
	return q.execOne(ctx, `UPDATE server_licenses SET status = 'cancelled', cancelled_at = ? WHERE id = ? AND status <> 'cancelled'`,
		ms(at), id)
}

func (q queries) LicenseHook(ctx context.Context, id int64) (*hosting.LicenseHook, error) {
	var url, secrets string
	err := q.q.QueryRowContext(ctx, `SELECT webhook_url, webhook_secrets FROM licenses WHERE id = ? AND provisioning = 'webhook'`, id).
		Scan(&url, &secrets)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && url == "") {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	h := &hosting.LicenseHook{URL: url}
	for _, s := range strings.Split(secrets, "\n") {
		if s != "" {
			h.Secrets = append(h.Secrets, s)
		}
	}
	return h, nil
}

func (q queries) HookedLicenses(ctx context.Context, accountID, serverID int64) ([]hosting.ServerLicense, error) {
	where, arg := `sl.account_id = ?`, accountID
	if serverID != 0 {
		where, arg = `sl.server_id = ?`, serverID
	}
	rows, err := q.q.QueryContext(ctx, `SELECT `+serverLicenseCols+serverLicenseFrom+`JOIN licenses l ON l.id = sl.license_id
		WHERE `+where+` AND sl.status IN ('pending', 'active') AND l.provisioning = 'webhook' ORDER BY sl.id`, arg)
	return orEmpty(collect(rows, err, scanServerLicense))
}

func (q queries) SetServerLicenseStatus(ctx context.Context, id int64, from, to hosting.LicenseStatus) (bool, error) {
	res, err := q.q.ExecContext(ctx, `UPDATE server_licenses SET status = ? WHERE id = ? AND status = ?`, string(to), id, string(from))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

func (q queries) SetLicenseVCPUs(ctx context.Context, id int64, vcpus int) error {
	return q.execOne(ctx, `UPDATE server_licenses SET charged_vcpus = ? WHERE id = ?`, vcpus, id)
}

// usageUpsert keeps the most vCPUs of a license's month.
const usageUpsert = ` ON CONFLICT (server_license_id, month) DO UPDATE SET max_vcpus =
	CASE WHEN excluded.max_vcpus > license_usage.max_vcpus THEN excluded.max_vcpus ELSE license_usage.max_vcpus END`

func (q queries) RecordLicenseUse(ctx context.Context, ids []int64, month time.Time, vcpus int) error {
	for _, id := range ids {
		if _, err := q.q.ExecContext(ctx, `INSERT INTO license_usage (server_license_id, month, max_vcpus) VALUES (?, ?, ?)`+usageUpsert,
			id, ms(month), vcpus); err != nil {
			return err
		}
	}
	return nil
}

func (q queries) LicenseReport(ctx context.Context, month time.Time) ([]store.LicenseUse, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT l.name, s.name, a.email, sl.started_at, sl.cancelled_at, u.max_vcpus
		FROM license_usage u JOIN server_licenses sl ON sl.id = u.server_license_id JOIN licenses l ON l.id = sl.license_id
		JOIN servers s ON s.id = sl.server_id JOIN accounts a ON a.id = sl.account_id
		WHERE u.month = ? ORDER BY sl.id`, ms(month))
	return collect(rows, err, func(sc func(...any) error) (u store.LicenseUse, err error) {
		var started int64
		var cancelled sql.NullInt64
		err = sc(&u.License, &u.Server, &u.Account, &started, &cancelled, &u.MaxVCPUs)
		u.Started, u.Cancelled = fromMS(started), fromNullMS(cancelled)
		return u, err
	})
}

func (q queries) AddLicenseKeys(ctx context.Context, licenseID int64, sealed [][]byte, at time.Time) error {
	for _, s := range sealed {
		if _, err := q.q.ExecContext(ctx, `INSERT INTO license_keys (license_id, sealed, created_at) VALUES (?, ?, ?)`,
			licenseID, s, ms(at)); err != nil {
			return err
		}
	}
	return nil
}

func (q queries) LicenseKeys(ctx context.Context, licenseID int64) (total, free int, err error) {
	err = q.q.QueryRowContext(ctx, `SELECT COUNT(*), COUNT(*) - COUNT(server_license_id) FROM license_keys WHERE license_id = ?`,
		licenseID).Scan(&total, &free)
	return total, free, err
}

// LicensesMonthly: see store.Reader. The same price the license step stages; led by
// the account's servers (servers_account), as server_licenses has no account index.
func (q queries) LicensesMonthly(ctx context.Context, accountID int64) (hosting.Money, error) {
	var total int64
	err := q.q.QueryRowContext(ctx, `SELECT COALESCE(SUM(CASE WHEN l.per = 'vcpu' THEN l.price_monthly * s.vcpus ELSE l.price_monthly END), 0)
		FROM servers s JOIN server_licenses sl ON sl.server_id = s.id JOIN licenses l ON l.id = sl.license_id
		WHERE s.account_id = ? AND s.deleted_at IS NULL AND sl.status IN ('pending', 'active')`, accountID).Scan(&total)
	return hosting.Money(total), err
}

// EarliestLicenseDue: see store.Reader.
func (q queries) EarliestLicenseDue(ctx context.Context, upto time.Time, account int64) (*time.Time, error) {
	var next sql.NullInt64
	and, args := ofAccount(account, ms(upto))
	err := q.q.QueryRowContext(ctx, `SELECT MIN(paid_through) FROM server_licenses
		WHERE status IN ('pending', 'active') AND paid_through <= ?`+and, args...).Scan(&next)
	return fromNullMS(next), err
}

// licenseChargeSQL is the statements of a license step that differ from an hourly
// step's: what it stages, and how it moves the licenses on by a month.
func (q queries) licenseChargeSQL(st store.LicenseStep) (stage, advance, usage NamedStatement) {
	and, args := "", []any{ms(st.Month)}
	if st.Account != 0 {
		and, args = ` AND sl.account_id = ?`, append(args, st.Account)
	}
	limit := ""
	if st.Limit > 0 {
		limit = " ORDER BY sl.id LIMIT ?"
		args = append(args, st.Limit)
	}
	lock := ""
	if q.d == dialectPostgres {
		lock = " FOR UPDATE OF sl"
	}
	stage = NamedStatement{"stage: INSERT INTO charge_batch (licenses)", `INSERT` + q.orFail() + ` INTO charge_batch (meter_id, account_id, resource_type, resource_id, resource_name, period_start, day, amount)
		SELECT sl.id, sl.account_id, 'license', sl.id, sl.name, sl.paid_through, sl.paid_through / 86400000,
			CASE WHEN l.per = 'vcpu' THEN l.price_monthly * s.vcpus ELSE l.price_monthly END
		FROM server_licenses sl JOIN licenses l ON l.id = sl.license_id JOIN servers s ON s.id = sl.server_id
		WHERE sl.status IN ('pending', 'active') AND sl.paid_through = ?` + and + limit + lock, args}
	// A join, not a subquery per row: PostgreSQL ran the correlated read of each
	// server's vCPUs under "id IN (SELECT ...)" in 6.8 s for 100,000 licenses.
	advance = NamedStatement{"advance: UPDATE server_licenses FROM", `UPDATE` + q.orFail() + ` server_licenses SET paid_through = ?, charged_vcpus = s.vcpus
		FROM charge_batch AS b, servers AS s
		WHERE b.meter_id = server_licenses.id AND s.id = server_licenses.server_id` + q.ledByBatch("server_licenses.id"),
		[]any{ms(st.Month.AddDate(0, 1, 0))}}
	// The month's vCPUs are those advance has just recorded on each license.
	usage = NamedStatement{"usage: INSERT INTO license_usage", `INSERT INTO license_usage (server_license_id, month, max_vcpus)
		SELECT b.meter_id, ?, sl.charged_vcpus FROM charge_batch b JOIN server_licenses sl ON sl.id = b.meter_id
		WHERE true` + usageUpsert, []any{ms(st.Month)}}
	return stage, advance, usage
}

// ChargeLicenses charges the month starting at st.Month for every held license whose
// paid month ended then (or st.Limit of them): staged in charge_batch like an hourly
// step's charges, then written to the ledger and the accounts by the same
// statements, the licenses moved on a month and their month's vCPUs recorded, each
// one statement over the batch.
func (q queries) ChargeLicenses(ctx context.Context, st store.LicenseStep) (store.ChargeResult, error) {
	var res store.ChargeResult
	stage, advance, usage := q.licenseChargeSQL(st)
	c := q.chargeStatements(st.Now)
	if err := q.stageTable(ctx); err != nil {
		return res, err
	}
	n, err := q.q.ExecContext(ctx, stage.Query, stage.Args...)
	if err != nil {
		return res, err
	}
	return q.chargeStaged(ctx, c, n, advance, usage)
}
