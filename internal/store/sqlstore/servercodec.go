package sqlstore

import (
	"encoding/binary"
	"time"
	"unsafe"

	"github.com/berthhq/berth/internal/hosting"
)

// The read cache keeps a server as bytes (servercache.go): a million cached servers
// held as Go values are some ten million objects the collector marks on every cycle,
// a fifth of the CPU of a GET /servers/{id} at that size; as bytes they are none.
// appendServer writes every field of a hosting.Server, decodeServer reads it back
// equal (TestServerCodecCarriesEveryField fills every field, found by reflection, so
// a field added to the type and not here fails it).

// appendServer appends s's encoding to b; false when s cannot be kept this way (a
// time not in UTC: the store reads every time in UTC), and the entry is not filed.
func appendServer(b []byte, s *hosting.Server) ([]byte, bool) {
	e := encoder{b: b, ok: true}
	e.int(s.ID)
	e.int(s.AccountID)
	e.str(s.Name)
	e.str(s.DisplayName)
	e.optInt(s.ProjectID)
	e.str(string(s.Status))
	e.bools(s.Suspended, s.SuspendedByOperator, s.SuspendedForCredit)
	e.operation(s.Operation)
	e.int(s.LocationID)
	e.int(s.PlanID)
	e.int(s.ImageID)
	e.optInt(s.AppID)
	e.optInt(s.RecipeID)
	e.int(int64(s.VCPUs))
	e.int(int64(s.MemoryMB))
	e.int(int64(s.DiskGB))
	e.optStr(s.IPv4)
	e.optStr(s.IPv6)
	e.str(s.RootPassHash)
	e.ints(s.SSHKeyIDs)
	e.keys(s.Keys)
	e.time(s.CreatedAt)
	e.optTime(s.DeletedAt)
	return e.b, e.ok
}

// decodeServer reads what appendServer wrote; false when b is not that. Its strings
// share one copy of b, so b may be reused once it returns.
func decodeServer(b []byte) (hosting.Server, bool) {
	d := decoder{b: string(b)} // the one copy
	var s hosting.Server
	var p *serverPointees // made when the first pointer is met
	alloc := func() {
		if p == nil {
			p = new(serverPointees)
		}
	}
	optInt := func(into **int64, at func() *int64) {
		if v, ok := d.optInt(); ok {
			alloc()
			q := at()
			*q = v
			*into = q
		}
	}
	s.ID = d.int()
	s.AccountID = d.int()
	s.Name = d.str()
	s.DisplayName = d.str()
	optInt(&s.ProjectID, func() *int64 { return &p.project })
	s.Status = hosting.Status(d.str())
	s.Suspended, s.SuspendedByOperator, s.SuspendedForCredit = d.bool(), d.bool(), d.bool()
	if d.bool() {
		q := new(opPointees)
		o := &q.op
		o.ID = d.int()
		o.AccountID = d.int()
		o.ServerID = d.int()
		optInt(&o.VolumeID, func() *int64 { return &q.volume })
		o.SizeGB = int(d.int())
		o.Automount, o.UpgradeDisk = d.bool(), d.bool()
		o.Type = hosting.OpType(d.str())
		o.Action = hosting.PowerAction(d.str())
		optInt(&o.SnapshotID, func() *int64 { return &q.snapshot })
		optInt(&o.ImageID, func() *int64 { return &q.image })
		optInt(&o.PlanID, func() *int64 { return &q.plan })
		o.AfterStatus = hosting.Status(d.str())
		o.Status = hosting.OpStatus(d.str())
		o.Error = d.str()
		o.StartedAt = d.time()
		if d.bool() {
			q.finished = d.time()
			o.FinishedAt = &q.finished
		}
		s.Operation = o
	}
	s.LocationID = d.int()
	s.PlanID = d.int()
	s.ImageID = d.int()
	optInt(&s.AppID, func() *int64 { return &p.app })
	optInt(&s.RecipeID, func() *int64 { return &p.recipe })
	s.VCPUs = int(d.int())
	s.MemoryMB = int(d.int())
	s.DiskGB = int(d.int())
	if v, ok := d.optStr(); ok {
		alloc()
		p.ipv4 = v
		s.IPv4 = &p.ipv4
	}
	if v, ok := d.optStr(); ok {
		alloc()
		p.ipv6 = v
		s.IPv6 = &p.ipv6
	}
	s.RootPassHash = d.str()
	if n, ok := d.count(); ok {
		s.SSHKeyIDs = make([]int64, n)
		for i := range s.SSHKeyIDs {
			s.SSHKeyIDs[i] = d.int()
		}
	}
	if n, ok := d.count(); ok {
		s.Keys = make([]hosting.SSHKey, n)
		for i := range s.Keys {
			k := &s.Keys[i]
			k.ID, k.AccountID = d.int(), d.int()
			k.Name, k.PublicKey, k.Fingerprint = d.str(), d.str(), d.str()
			k.CreatedAt = d.time()
		}
	}
	s.CreatedAt = d.time()
	if d.bool() {
		alloc()
		p.deleted = d.time()
		s.DeletedAt = &p.deleted
	}
	if d.bad || len(d.b) != 0 {
		return hosting.Server{}, false
	}
	return s, true
}

// serverPointees is what a decoded server's pointers point to, in one allocation;
// opPointees its operation's, in another (most servers have none).
type serverPointees struct {
	project, app, recipe int64
	ipv4, ipv6           string
	deleted              time.Time
}

type opPointees struct {
	op                      hosting.Operation
	volume, snapshot, image int64
	plan                    int64
	finished                time.Time
}

type encoder struct {
	b  []byte
	ok bool
}

func (e *encoder) int(v int64) { e.b = binary.AppendVarint(e.b, v) }

func (e *encoder) str(v string) {
	e.b = binary.AppendUvarint(e.b, uint64(len(v)))
	e.b = append(e.b, v...)
}

func (e *encoder) bools(v ...bool) {
	for _, b := range v {
		e.b = append(e.b, boolByte(b))
	}
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

func (e *encoder) optInt(p *int64) {
	e.bools(p != nil)
	if p != nil {
		e.int(*p)
	}
}

func (e *encoder) optStr(p *string) {
	e.bools(p != nil)
	if p != nil {
		e.str(*p)
	}
}

// time keeps the instant and that it is in UTC, nothing else (a monotonic reading:
// none of the store's times has one).
func (e *encoder) time(t time.Time) {
	if t.Location() != time.UTC {
		e.ok = false
	}
	e.int(t.Unix())
	e.int(int64(t.Nanosecond()))
}

func (e *encoder) optTime(t *time.Time) {
	e.bools(t != nil)
	if t != nil {
		e.time(*t)
	}
}

// count writes a slice's length, and whether it is nil: 0 for nil, else length + 1.
func (e *encoder) count(n int, isNil bool) {
	if isNil {
		e.b = append(e.b, 0)
		return
	}
	e.b = binary.AppendUvarint(e.b, uint64(n)+1)
}

func (e *encoder) ints(v []int64) {
	e.count(len(v), v == nil)
	for _, id := range v {
		e.int(id)
	}
}

func (e *encoder) keys(v []hosting.SSHKey) {
	e.count(len(v), v == nil)
	for _, k := range v {
		e.int(k.ID)
		e.int(k.AccountID)
		e.str(k.Name)
		e.str(k.PublicKey)
		e.str(k.Fingerprint)
		e.time(k.CreatedAt)
	}
}

func (e *encoder) operation(o *hosting.Operation) {
	e.bools(o != nil)
	if o == nil {
		return
	}
	e.int(o.ID)
	e.int(o.AccountID)
	e.int(o.ServerID)
	e.optInt(o.VolumeID)
	e.int(int64(o.SizeGB))
	e.bools(o.Automount, o.UpgradeDisk)
	e.str(string(o.Type))
	e.str(string(o.Action))
	e.optInt(o.SnapshotID)
	e.optInt(o.ImageID)
	e.optInt(o.PlanID)
	e.str(string(o.AfterStatus))
	e.str(string(o.Status))
	e.str(o.Error)
	e.time(o.StartedAt)
	e.optTime(o.FinishedAt)
}

// decoder reads an encoding from b, which it consumes. The strings it returns are
// parts of b. A read past the end, or a length that does not fit, sets bad and
// reads zeros from then on.
type decoder struct {
	b   string
	bad bool
}

// int reads what binary.AppendVarint wrote: a uvarint of the value zigzagged.
func (d *decoder) int() int64 {
	u := d.uint()
	return int64(u>>1) ^ -int64(u&1)
}

func (d *decoder) uint() uint64 {
	v, n := binary.Uvarint(unsafe.Slice(unsafe.StringData(d.b), len(d.b)))
	if n <= 0 {
		d.bad, d.b = true, ""
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string {
	n := d.uint()
	if n > uint64(len(d.b)) {
		d.bad, d.b = true, ""
		return ""
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) bool() bool {
	if len(d.b) == 0 {
		d.bad = true
		return false
	}
	v := d.b[0]
	d.b = d.b[1:]
	if v > 1 {
		d.bad, d.b = true, ""
		return false
	}
	return v == 1
}

func (d *decoder) optInt() (int64, bool) {
	if !d.bool() {
		return 0, false
	}
	return d.int(), true
}

func (d *decoder) optStr() (string, bool) {
	if !d.bool() {
		return "", false
	}
	return d.str(), true
}

func (d *decoder) time() time.Time {
	sec := d.int()
	nsec := d.int()
	if nsec < 0 || nsec >= 1e9 {
		d.bad = true
		return time.Time{}
	}
	return time.Unix(sec, nsec).UTC()
}

// count reads what encoder.count wrote: false for a nil slice. A length longer than
// what is left (each element takes a byte at least) is bad.
func (d *decoder) count() (int, bool) {
	n := d.uint()
	if n == 0 {
		return 0, false
	}
	if n-1 > uint64(len(d.b)) {
		d.bad, d.b = true, ""
		return 0, false
	}
	return int(n - 1), true
}
