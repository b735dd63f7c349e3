package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/berthhq/berth/internal/dnszone"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/nameserver"
	"github.com/berthhq/berth/internal/store"
)

// ---- zones and their RRsets (docs/api.md, Domains) ----

const zoneCols = `z.id, z.account_id, z.name, z.ttl, z.serial, z.rrset_count, z.created_at`

func scanZone(sc func(...any) error) (hosting.Domain, error) {
	var d hosting.Domain
	var serial, created int64
	if err := sc(&d.ID, &d.AccountID, &d.Name, &d.TTL, &serial, &d.RRsetCount, &created); err != nil {
		return d, notFound(err)
	}
	d.Serial, d.CreatedAt = uint32(serial), fromMS(created)
	return d, nil
}

func (q queries) Domains(ctx context.Context, accountID int64) ([]hosting.Domain, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+zoneCols+` FROM zones z WHERE z.account_id = ? ORDER BY z.id`, accountID)
	return orEmpty(collect(rows, err, scanZone))
}

func (q queries) Domain(ctx context.Context, accountID int64, ref hosting.DomainRef) (hosting.Domain, error) {
	return q.domain(ctx, accountID, ref, "")
}

// LockDomain implements store.Writer: Domain, FOR UPDATE on PostgreSQL (SQLite runs
// one writer at a time).
func (q queries) LockDomain(ctx context.Context, accountID int64, ref hosting.DomainRef) (hosting.Domain, error) {
	return q.domain(ctx, accountID, ref, q.forUpdate())
}

func (q queries) domain(ctx context.Context, accountID int64, ref hosting.DomainRef, lock string) (hosting.Domain, error) {
	where, arg := `z.id = ?`, any(ref.ID)
	if ref.Name != "" {
		where, arg = `z.name = ?`, ref.Name
	}
	return scanZone(q.q.QueryRowContext(ctx, `SELECT `+zoneCols+` FROM zones z WHERE z.account_id = ? AND `+where+lock,
		accountID, arg).Scan)
}

// suffixes lists name and each name it lies under, down to its last label:
// a.example.com, example.com, com.
func suffixes(name string) []any {
	out := []any{name}
	for i := strings.IndexByte(name, '.'); i >= 0; i = strings.IndexByte(name, '.') {
		name = name[i+1:]
		out = append(out, name)
	}
	return out
}

// placeholders is "?, ?, ?" for n values.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// rname is a zone name's labels from the right, each followed by a dot
// ("www.example.com" is "com.example.www."): the zones under a name n are those whose
// rname starts with rname(n) and is longer, the index range from rname(n) (left out)
// to rname(n) with its last dot made a slash, the byte after it.
func rname(name string) string {
	labels := strings.Split(name, ".")
	slices.Reverse(labels)
	return strings.Join(labels, ".") + "."
}

// zoneCreation is the name of the lock that zone creations, and the checks before
// them, take on PostgreSQL (Serialize).
const zoneCreation = "zone-creation"

// ZoneRelated implements store.Writer: the zones whose name is one of name's suffixes
// (equal or a parent), or lies under name (a child: a range of rname's index), after
// zone creation's lock.
func (q queries) ZoneRelated(ctx context.Context, name string) (bool, error) {
	if err := q.Serialize(ctx, zoneCreation); err != nil {
		return false, err
	}
	names := suffixes(name)
	var n int
	r := rname(name)
	err := q.q.QueryRowContext(ctx, zoneRelatedQuery(len(names)), append(names, r, r[:len(r)-1]+"/")...).Scan(&n)
	return n > 0, err
}

// zoneRelatedQuery counts (0 or 1) the zones named one of n names, or whose rname
// lies between two bounds: a lookup of the unique name and one range of rname's index.
func zoneRelatedQuery(n int) string {
	return `SELECT COUNT(*) FROM (SELECT 1 FROM zones WHERE name IN (` + placeholders(n) + `)
		UNION ALL SELECT 1 FROM zones WHERE rname > ? AND rname < ? LIMIT 1) AS x`
}

func (q queries) EnclosingZone(ctx context.Context, name string) (hosting.Domain, error) {
	names := suffixes(strings.ToLower(strings.TrimSuffix(name, ".")))
	return scanZone(q.q.QueryRowContext(ctx, `SELECT `+zoneCols+` FROM zones z WHERE z.name IN (`+placeholders(len(names))+`)
		ORDER BY LENGTH(z.name) DESC LIMIT 1`, names...).Scan)
}

func (q queries) CreateDomain(ctx context.Context, d hosting.Domain, sets []dnszone.RRset) (int64, error) {
	if err := q.Serialize(ctx, zoneCreation); err != nil {
		return 0, err
	}
	serial, err := q.firstSerial(ctx, d.Name, d.CreatedAt)
	if err != nil {
		return 0, err
	}
	id, err := q.insert(ctx, `INSERT INTO zones (account_id, name, rname, ttl, serial, rrset_count, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		d.AccountID, d.Name, rname(d.Name), d.TTL, int64(serial), len(sets), ms(d.CreatedAt))
	if err != nil {
		return 0, err
	}
	return id, q.insertRRsets(ctx, id, sets)
}

// firstSerial is the serial of a zone named name made at created:
// hosting.NewZoneSerial, or above the last serial a deleted zone of that name had
// (zone_serials) when that is greater: a zone's serial only grows under its name, so
// that a secondary, or PowerDNS (which never goes back), takes the new zone.
func (q queries) firstSerial(ctx context.Context, name string, created time.Time) (uint32, error) {
	serial := hosting.NewZoneSerial(created)
	var last int64
	err := q.q.QueryRowContext(ctx, `SELECT serial FROM zone_serials WHERE name = ?`, name).Scan(&last)
	if errors.Is(err, sql.ErrNoRows) {
		return serial, nil
	}
	if err != nil {
		return 0, err
	}
	if next := hosting.NextZoneSerial(uint32(last), created); !hosting.SerialGreater(serial, next) {
		serial = next
	}
	return serial, nil
}

// keepSerialsQuery keeps the serials of the zones it selects in zone_serials, before
// they are deleted (firstSerial reads them).
const keepSerialsQuery = `INSERT INTO zone_serials (name, serial) SELECT name, serial FROM zones WHERE `

const keepSerialsConflict = ` ON CONFLICT (name) DO UPDATE SET serial = excluded.serial`

// lockZone reads a zone's serial, locking its row on PostgreSQL until the transaction
// ends: every change of a zone takes it first, so that changes of one zone take turns
// and each raises the serial the one before it left.
func (q queries) lockZone(ctx context.Context, id int64) (uint32, error) {
	var serial int64
	err := q.q.QueryRowContext(ctx, `SELECT serial FROM zones WHERE id = ?`+q.forUpdate(), id).Scan(&serial)
	return uint32(serial), notFound(err)
}

// changedZone raises a zone's serial from old at at, and counts its RRsets afresh.
func (q queries) changedZone(ctx context.Context, id int64, old uint32, at time.Time) error {
	return q.execOne(ctx, `UPDATE zones SET serial = ?, rrset_count = (SELECT COUNT(*) FROM zone_rrsets WHERE zone_id = ?)
		WHERE id = ?`, int64(hosting.NextZoneSerial(old, at)), id, id)
}

// changeZone runs change on a zone locked (lockZone), then raises its serial.
func (q queries) changeZone(ctx context.Context, id int64, at time.Time, change func() error) error {
	old, err := q.lockZone(ctx, id)
	if err != nil {
		return err
	}
	if err := change(); err != nil {
		return err
	}
	return q.changedZone(ctx, id, old, at)
}

func (q queries) SetDomainTTL(ctx context.Context, id int64, ttl int, at time.Time) error {
	return q.changeZone(ctx, id, at, func() error {
		return q.execOne(ctx, `UPDATE zones SET ttl = ? WHERE id = ?`, ttl, id)
	})
}

func (q queries) DeleteDomain(ctx context.Context, id int64) error {
	if _, err := q.lockZone(ctx, id); err != nil {
		return err
	}
	if _, err := q.q.ExecContext(ctx, keepSerialsQuery+`id = ?`+keepSerialsConflict, id); err != nil {
		return err
	}
	if _, err := q.q.ExecContext(ctx, `DELETE FROM zone_rrsets WHERE zone_id = ?`, id); err != nil {
		return err
	}
	return q.execOne(ctx, `DELETE FROM zones WHERE id = ?`, id)
}

// recordRow is how a record is kept in zone_rrsets.records, a JSON array.
type recordRow struct {
	Value   string `json:"value"`
	Comment string `json:"comment,omitempty"`
}

func encodeRecords(rs []dnszone.Record) (string, error) {
	rows := make([]recordRow, len(rs))
	for i, r := range rs {
		rows[i] = recordRow(r)
	}
	b, err := json.Marshal(rows)
	return string(b), err
}

func decodeRecords(s string) ([]dnszone.Record, error) {
	var rows []recordRow
	if err := json.Unmarshal([]byte(s), &rows); err != nil {
		return nil, fmt.Errorf("zone_rrsets.records: %w", err)
	}
	out := make([]dnszone.Record, len(rows))
	for i, r := range rows {
		out[i] = dnszone.Record(r)
	}
	return out, nil
}

func (q queries) PutRRset(ctx context.Context, zoneID int64, set dnszone.RRset, at time.Time) (created bool, err error) {
	records, err := encodeRecords(set.Records)
	if err != nil {
		return false, err
	}
	err = q.changeZone(ctx, zoneID, at, func() error {
		res, err := q.q.ExecContext(ctx, `UPDATE zone_rrsets SET ttl = ?, records = ? WHERE zone_id = ? AND name = ? AND type = ?`,
			set.TTL, records, zoneID, set.Name, string(set.Type))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n > 0 {
			return err
		}
		created = true
		return q.insertRRsets(ctx, zoneID, []dnszone.RRset{set})
	})
	return created, err
}

func (q queries) DeleteRRset(ctx context.Context, zoneID int64, name string, t dnszone.Type, at time.Time) error {
	return q.changeZone(ctx, zoneID, at, func() error {
		return q.execOne(ctx, `DELETE FROM zone_rrsets WHERE zone_id = ? AND name = ? AND type = ?`, zoneID, name, string(t))
	})
}

func (q queries) ReplaceRRsets(ctx context.Context, zoneID int64, sets []dnszone.RRset, at time.Time) error {
	return q.changeZone(ctx, zoneID, at, func() error {
		if _, err := q.q.ExecContext(ctx, `DELETE FROM zone_rrsets WHERE zone_id = ?`, zoneID); err != nil {
			return err
		}
		return q.insertRRsets(ctx, zoneID, sets)
	})
}

// rrsetBatch is how many RRsets one INSERT writes (5 values each): a zone file's
// 5,000 in 50 statements.
const rrsetBatch = 100

// insertRRsets writes sets into a zone that has none of their names and types.
func (q queries) insertRRsets(ctx context.Context, zoneID int64, sets []dnszone.RRset) error {
	for chunk := range slices.Chunk(sets, rrsetBatch) {
		args := make([]any, 0, 5*len(chunk))
		for _, s := range chunk {
			records, err := encodeRecords(s.Records)
			if err != nil {
				return err
			}
			args = append(args, zoneID, s.Name, string(s.Type), s.TTL, records)
		}
		values := strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?), ", len(chunk)), ", ")
		if _, err := q.q.ExecContext(ctx, `INSERT INTO zone_rrsets (zone_id, name, type, ttl, records) VALUES `+values, args...); err != nil {
			return conflict(err)
		}
	}
	return nil
}

func scanRRset(sc func(...any) error) (dnszone.RRset, error) {
	var s dnszone.RRset
	var typ, records string
	var ttl *int
	if err := sc(&s.Name, &typ, &ttl, &records); err != nil {
		return s, err
	}
	s.Type, s.TTL = dnszone.Type(typ), ttl
	var err error
	s.Records, err = decodeRecords(records)
	return s, err
}

// sortRRsets puts sets in DNS order: by name (dnszone.CompareNames), then type.
func sortRRsets(sets []dnszone.RRset) {
	slices.SortFunc(sets, func(a, b dnszone.RRset) int {
		return cmp.Or(dnszone.CompareNames(a.Name, b.Name), strings.Compare(string(a.Type), string(b.Type)))
	})
}

func (q queries) RRsets(ctx context.Context, zoneID int64, f store.RRsetFilter) ([]dnszone.RRset, error) {
	where, args := `zone_id = ?`, []any{zoneID}
	if f.Name != "" {
		where, args = where+` AND name = ?`, append(args, f.Name)
	}
	if f.Type != "" {
		where, args = where+` AND type = ?`, append(args, string(f.Type))
	}
	rows, err := q.q.QueryContext(ctx, `SELECT name, type, ttl, records FROM zone_rrsets WHERE `+where, args...)
	sets, err := orEmpty(collect(rows, err, scanRRset))
	sortRRsets(sets)
	return sets, err
}

// servedRow is a row of ServedZone's join: its zone, and one of its RRsets (none for
// a zone without any).
type servedRow struct {
	zone nameserver.Zone
	set  *dnszone.RRset
}

func scanServed(sc func(...any) error) (servedRow, error) {
	var r servedRow
	var serial int64
	var name, typ, records sql.NullString
	var ttl *int
	if err := sc(&r.zone.Name, &serial, &r.zone.TTL, &name, &typ, &ttl, &records); err != nil {
		return r, err
	}
	r.zone.Serial = uint32(serial)
	if name.Valid {
		recs, err := decodeRecords(records.String)
		if err != nil {
			return r, err
		}
		r.set = &dnszone.RRset{Name: name.String, Type: dnszone.Type(typ.String), TTL: ttl, Records: recs}
	}
	return r, nil
}

func (q queries) ServedZone(ctx context.Context, id int64) (nameserver.Zone, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT z.name, z.serial, z.ttl, r.name, r.type, r.ttl, r.records
		FROM zones z LEFT JOIN zone_rrsets r ON r.zone_id = z.id WHERE z.id = ?`, id)
	got, err := collect(rows, err, scanServed)
	if err != nil || len(got) == 0 {
		return nameserver.Zone{}, orNotFound(err)
	}
	z := got[0].zone
	var sets []dnszone.RRset
	for _, r := range got {
		if r.set != nil {
			sets = append(sets, *r.set)
		}
	}
	sortRRsets(sets)
	z.RRsets = make([]nameserver.RRset, len(sets))
	for i, s := range sets {
		out := nameserver.RRset{Name: strings.TrimSuffix(dnszone.AbsoluteName(z.Name, s.Name), "."), Type: string(s.Type), TTL: z.TTL}
		if s.TTL != nil {
			out.TTL = *s.TTL
		}
		for _, r := range s.Records {
			out.Values = append(out.Values, r.Value)
		}
		z.RRsets[i] = out
	}
	return z, nil
}
