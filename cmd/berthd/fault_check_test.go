package main

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
)

// What the fault test reads back from the database once berthd has stopped.

type fServer struct {
	id                     int64
	name, display, status  string
	suspended              int64
	operation              sql.NullInt64
	deleted                bool
	provisionOK, provision int // successful / all provisioning operations
}

type fOp struct {
	id, server              int64
	typ, action, status, ex string
	snapshot                sql.NullInt64
	finished                bool
}

type fSnap struct {
	id, server   int64
	name, status string
	deleted      bool
}

type fMachine struct {
	state     string
	destroyed bool
}

type fEvent struct{ machine, event, key string }

type fJob struct {
	id           int64
	kind, state  string
	op, snapshot int64
}

type fTx struct {
	id, account, amount, balance int64
	typ, desc, resType           string
	resID, period                sql.NullInt64
}

type faultWorld struct {
	servers   map[int64]*fServer
	byName    map[string]*fServer
	ops       map[int64]*fOp
	snapshots map[int64]*fSnap
	machines  map[string]*fMachine
	simSnaps  map[[2]string]bool // (machine, snapshot) of the driver
	events    []fEvent
	jobs      []fJob
	txs       []fTx
	credit    map[int64]int64    // account → credit
	meters    map[[2]string]bool // (type, id) → stopped
	resumed   int                // operation jobs that a kill interrupted
	charges   map[[2]string]int  // (type, id) → charges
	refunds   map[[2]string]int  // (type, id) → refunds
	periods   map[[3]string]int  // (type, id, period) → charges
	accountOf map[int64]int64    // server → account
}

func resKey(typ string, id int64) [2]string { return [2]string{typ, strconv.FormatInt(id, 10)} }

// loadWorld reads every table the checks need.
// jsonInt writes a JSON field of an integer in the store's dialect (storeDB).
func loadWorld(ctx context.Context, t *testing.T, db *sql.DB, jsonInt func(col, field string) string) *faultWorld {
	t.Helper()
	w := &faultWorld{servers: map[int64]*fServer{}, byName: map[string]*fServer{}, ops: map[int64]*fOp{},
		snapshots: map[int64]*fSnap{}, machines: map[string]*fMachine{}, simSnaps: map[[2]string]bool{},
		credit: map[int64]int64{}, meters: map[[2]string]bool{}, charges: map[[2]string]int{},
		refunds: map[[2]string]int{}, periods: map[[3]string]int{}, accountOf: map[int64]int64{}}
	each := func(query string, scan func(rows *sql.Rows) error) {
		t.Helper()
		rows, err := db.QueryContext(ctx, query)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		defer rows.Close()
		for rows.Next() {
			if err := scan(rows); err != nil {
				t.Fatalf("%s: %v", query, err)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	}
	each(`SELECT id, account_id, name, display_name, status, suspended, operation_id, deleted_at IS NOT NULL FROM servers`, func(r *sql.Rows) error {
		s := &fServer{}
		var acct int64
		err := r.Scan(&s.id, &acct, &s.name, &s.display, &s.status, &s.suspended, &s.operation, &s.deleted)
		w.servers[s.id], w.byName[s.name], w.accountOf[s.id] = s, s, acct
		return err
	})
	each(`SELECT id, server_id, type, action, status, error, snapshot_id, finished_at IS NOT NULL FROM operations`, func(r *sql.Rows) error {
		o := &fOp{}
		err := r.Scan(&o.id, &o.server, &o.typ, &o.action, &o.status, &o.ex, &o.snapshot, &o.finished)
		w.ops[o.id] = o
		return err
	})
	for _, o := range w.ops {
		if s := w.servers[o.server]; s != nil && o.typ == string(hosting.OpProvision) {
			s.provision++
			if o.status == string(hosting.OpSuccess) {
				s.provisionOK++
			}
		}
	}
	each(`SELECT id, server_id, name, status, deleted_at IS NOT NULL FROM snapshots`, func(r *sql.Rows) error {
		s := &fSnap{}
		err := r.Scan(&s.id, &s.server, &s.name, &s.status, &s.deleted)
		w.snapshots[s.id] = s
		return err
	})
	each(`SELECT name, state, destroyed_at IS NOT NULL FROM sim_machines`, func(r *sql.Rows) error {
		var name string
		m := &fMachine{}
		err := r.Scan(&name, &m.state, &m.destroyed)
		w.machines[name] = m
		return err
	})
	each(`SELECT machine, name FROM sim_snapshots`, func(r *sql.Rows) error {
		var k [2]string
		err := r.Scan(&k[0], &k[1])
		w.simSnaps[k] = true
		return err
	})
	each(`SELECT machine, event, op_key FROM sim_events ORDER BY id`, func(r *sql.Rows) error {
		var e fEvent
		err := r.Scan(&e.machine, &e.event, &e.key)
		w.events = append(w.events, e)
		return err
	})
	// The periodic jobs (metering, housekeeping) are not the workload's: whether a
	// round lived long enough for the elected leader to enqueue them is chance.
	// A job that a kill interrupted was resumed by the next process's start (SQLite) or
	// taken over by the sweep once the dead process's liveness lock was free
	// (PostgreSQL, internal/app/liveness.go); each says so in the job's errors.
	each(fmt.Sprintf(`SELECT id, kind, state, COALESCE(%s, 0), COALESCE(%s, 0),
		COALESCE(%s, '') LIKE '%%berthd stopped%%' OR COALESCE(%s, '') LIKE '%%process working this job died%%'
		FROM river_job WHERE kind NOT IN ('%s', '%s')`,
		jsonInt("args", "operation_id"), jsonInt("args", "snapshot_id"), asText("errors"), asText("errors"),
		ops.MeterArgs{}.Kind(), ops.HousekeepingArgs{}.Kind()), func(r *sql.Rows) error {
		var j fJob
		var resumed bool
		err := r.Scan(&j.id, &j.kind, &j.state, &j.op, &j.snapshot, &resumed)
		w.jobs = append(w.jobs, j)
		if resumed && j.kind == "berth.operation" {
			w.resumed++
		}
		return err
	})
	each(`SELECT id, account_id, type, amount, balance_after, description, resource_type, resource_id, period_start
		FROM transactions ORDER BY account_id, id`, func(r *sql.Rows) error {
		var x fTx
		err := r.Scan(&x.id, &x.account, &x.typ, &x.amount, &x.balance, &x.desc, &x.resType, &x.resID, &x.period)
		w.txs = append(w.txs, x)
		if x.resID.Valid {
			k := resKey(x.resType, x.resID.Int64)
			switch x.typ {
			case string(hosting.TxCharge):
				w.charges[k]++
				w.periods[[3]string{k[0], k[1], strconv.FormatInt(x.period.Int64, 10)}]++
			case string(hosting.TxRefund):
				w.refunds[k]++
			}
		}
		return err
	})
	each(`SELECT id, credit FROM accounts`, func(r *sql.Rows) error {
		var id, credit int64
		err := r.Scan(&id, &credit)
		w.credit[id] = credit
		return err
	})
	each(`SELECT resource_type, resource_id, stopped_at IS NOT NULL FROM meters ORDER BY id`, func(r *sql.Rows) error {
		var typ string
		var id int64
		var stopped bool
		err := r.Scan(&typ, &id, &stopped)
		w.meters[resKey(typ, id)] = stopped
		return err
	})
	return w
}

// expectedSteps are the driver steps an operation makes, as step → event.
func expectedSteps(o *fOp) map[string]string {
	switch hosting.OpType(o.typ) {
	case hosting.OpProvision:
		return map[string]string{"create": "create"}
	case hosting.OpDelete:
		return map[string]string{"destroy": "destroy"}
	case hosting.OpSnapshot:
		return map[string]string{"snapshot": fmt.Sprintf("snapshot:snap-%d", o.snapshot.Int64)}
	case hosting.OpPower:
		switch hosting.PowerAction(o.action) {
		case hosting.PowerOn:
			return map[string]string{"start": "start"}
		case hosting.PowerOff:
			return map[string]string{"stop": "stop"}
		case hosting.PowerShutdown:
			return map[string]string{"shutdown": "shutdown"}
		case hosting.PowerReboot:
			return map[string]string{"shutdown": "shutdown", "start": "start"}
		case hosting.PowerReset:
			return map[string]string{"reset": "reset"}
		}
	}
	return nil
}

// checkFault compares what the clients were told with what the database holds, and
// the database with itself. It returns every problem found.
// openings gives each account's opening credit (the top-up account create writes).
func checkFault(w *faultWorld, reqs []faultReq, openings map[int64]string) []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }

	// Index the requests.
	orders := map[string]faultReq{} // display name → the one order request
	snapReqs := map[string]faultReq{}
	acceptedOps := map[int64]faultReq{}
	deleteReqs := map[int64][]faultReq{}
	snapDeleteReqs := map[int64][]faultReq{}
	unknownPower := map[string]int{} // "server action" → requests with a lost answer
	topupReqs := map[string]faultReq{}
	for _, r := range reqs {
		switch r.kind {
		case "order":
			orders[r.name] = r
			if r.outcome == accepted {
				acceptedOps[r.op] = r
			}
		case "power":
			if r.outcome == accepted {
				acceptedOps[r.op] = r
			} else if r.outcome == unknown {
				unknownPower[fmt.Sprintf("%d %s", r.server, r.action)]++
			}
		case "snapshot":
			snapReqs[r.name] = r
		case "delete":
			if r.outcome != refused {
				deleteReqs[r.server] = append(deleteReqs[r.server], r)
			}
		case "snapshot-delete":
			if r.outcome != refused {
				snapDeleteReqs[r.snapshot] = append(snapDeleteReqs[r.snapshot], r)
			}
		case "topup":
			topupReqs[r.name] = r
		}
	}
	anyAccepted := func(rs []faultReq) (faultReq, bool) {
		for _, r := range rs {
			if r.outcome == accepted {
				return r, true
			}
		}
		return faultReq{}, false
	}
	// sd and nd describe a server and a snapshot with the request that made them.
	sd := func(s *fServer) string {
		if r, ok := orders[s.display]; ok {
			return fmt.Sprintf("server %d (%s, ordered by client %d in round %d, %s)", s.id, s.name, r.client, r.round, outcomeNames[r.outcome])
		}
		return fmt.Sprintf("server %d (%s)", s.id, s.name)
	}
	nd := func(sn *fSnap) string {
		if r, ok := snapReqs[sn.name]; ok {
			return fmt.Sprintf("snapshot %d (%q of server %d, asked for by client %d in round %d, %s)", sn.id, sn.name, sn.server,
				r.client, r.round, outcomeNames[r.outcome])
		}
		return fmt.Sprintf("snapshot %d (%q of server %d)", sn.id, sn.name, sn.server)
	}
	// The system itself powers off servers suspended for exhausted credit.
	wentNegative := false
	for _, x := range w.txs {
		wentNegative = wentNegative || x.balance < 0
	}

	// 1. Every operation finished, exactly once, with its driver steps applied once.
	opsOf := map[int64][]*fOp{}
	for _, o := range w.ops {
		opsOf[o.server] = append(opsOf[o.server], o)
		if o.status != string(hosting.OpSuccess) && o.status != string(hosting.OpError) || !o.finished {
			bad("operation %d (%s %s on server %d) did not finish: status %q", o.id, o.typ, o.action, o.server, o.status)
		}
		if o.status == string(hosting.OpError) {
			// The simulated driver never fails by itself: a failure is a step that broke
			// across a restart.
			bad("operation %d (%s %s on server %d) failed: %s", o.id, o.typ, o.action, o.server, o.ex)
		}
		if expectedSteps(o) == nil {
			bad("operation %d (%s %s on server %d) is of a kind the workload never asks for", o.id, o.typ, o.action, o.server)
		}
	}
	for id, r := range acceptedOps {
		o := w.ops[id]
		switch {
		case o == nil:
			bad("accepted %s: operation %d does not exist", r, id)
		case r.kind == "order" && (o.typ != string(hosting.OpProvision) || o.server != r.server):
			bad("accepted %s: operation %d is %s on server %d", r, id, o.typ, o.server)
		case r.kind == "power" && (o.typ != string(hosting.OpPower) || o.action != r.action || o.server != r.server):
			bad("accepted %s: operation %d is %s(%s) on server %d", r, id, o.typ, o.action, o.server)
		}
	}
	jobsOfOp := map[int64][]fJob{}
	jobsOfSnap := map[int64][]fJob{}
	for _, j := range w.jobs {
		switch j.kind {
		case "berth.operation":
			jobsOfOp[j.op] = append(jobsOfOp[j.op], j)
			if w.ops[j.op] == nil {
				bad("job %d carries operation %d, which does not exist", j.id, j.op)
			}
		case "berth.snapshot_delete":
			jobsOfSnap[j.snapshot] = append(jobsOfSnap[j.snapshot], j)
		case "berth.wake":
			// The no-op that gets committed jobs fetched at once (internal/app/wake.go):
			// it carries nothing, and must end completed like every other job.
		case ops.MailKind:
			// A low-credit warning or a suspension notice (internal/ops/mail.go), sent to
			// the log (no --smtp-url): it must end completed like every other job.
		default:
			bad("job %d is of an unknown kind %q", j.id, j.kind)
		}
		// A job given up (discarded) is allowed only to an operation that then got a new
		// one (ops.ResumeOrphanedOperations), checked below.
		if j.state != "completed" && !(j.kind == "berth.operation" && j.state == "discarded") {
			bad("job %d (%s, operation %d, snapshot %d) ended %s, not completed", j.id, j.kind, j.op, j.snapshot, j.state)
		}
	}
	for _, o := range w.ops {
		completed := 0
		for _, j := range jobsOfOp[o.id] {
			if j.state == "completed" {
				completed++
			}
		}
		if completed != 1 {
			bad("operation %d (%s %s on server %d) has %d completed jobs (of %d), want exactly one", o.id, o.typ, o.action, o.server,
				completed, len(jobsOfOp[o.id]))
		}
	}
	// Driver events: each op-N:step belongs to operation N on its server's machine.
	stepsOf := map[int64]map[string]string{}
	snapDeleteEvents := map[int64]int{}
	for _, e := range w.events {
		if rest, ok := strings.CutPrefix(e.key, "op-"); ok {
			idText, step, _ := strings.Cut(rest, ":")
			id, _ := strconv.ParseInt(idText, 10, 64)
			o := w.ops[id]
			if o == nil {
				bad("machine %s: event %s (%s) of operation %d, which does not exist", e.machine, e.event, e.key, id)
				continue
			}
			if s := w.servers[o.server]; s == nil || s.name != e.machine {
				bad("machine %s: event %s (%s) of operation %d, which is on server %d", e.machine, e.event, e.key, id, o.server)
			}
			if stepsOf[id] == nil {
				stepsOf[id] = map[string]string{}
			}
			stepsOf[id][step] = e.event
			continue
		}
		if rest, ok := strings.CutPrefix(e.key, "snapshot-delete-snap-"); ok {
			id, _ := strconv.ParseInt(rest, 10, 64)
			sn := w.snapshots[id]
			switch {
			case sn == nil:
				bad("machine %s: deletion of snapshot %d, which does not exist", e.machine, id)
			case !sn.deleted:
				bad("machine %s: snapshot %d was deleted in the driver but is live (%s)", e.machine, id, sn.status)
			case w.servers[sn.server] == nil || w.servers[sn.server].name != e.machine:
				bad("machine %s: deletion of snapshot %d of server %d", e.machine, id, sn.server)
			case e.event != fmt.Sprintf("delete-snapshot:snap-%d", id):
				bad("machine %s: snapshot %d deletion recorded as %q", e.machine, id, e.event)
			}
			snapDeleteEvents[id]++
			continue
		}
		bad("machine %s: event %s with a key %q no step makes", e.machine, e.event, e.key)
	}
	for _, o := range w.ops {
		want, got := expectedSteps(o), stepsOf[o.id]
		for step, ev := range got {
			if want[step] != ev {
				bad("operation %d (%s %s on server %d) applied step %s as %q; it makes %v", o.id, o.typ, o.action, o.server, step, ev, want)
			}
		}
		if o.status != string(hosting.OpSuccess) {
			continue
		}
		s := w.servers[o.server]
		for step, ev := range want {
			if _, ok := got[step]; ok {
				continue
			}
			if o.typ == string(hosting.OpDelete) && s != nil && s.provisionOK == 0 {
				continue // no machine was ever made: nothing to destroy
			}
			bad("operation %d (%s %s on server %d) succeeded without its step %s (%s) in the driver", o.id, o.typ, o.action, o.server, step, ev)
		}
	}
	// No operation nobody asked for: every power operation was accepted, or sent with
	// its answer lost (or is the power-off of a suspension for credit).
	powerOps := map[string]int{}
	for _, o := range w.ops {
		if o.typ == string(hosting.OpPower) {
			if _, ok := acceptedOps[o.id]; !ok {
				powerOps[fmt.Sprintf("%d %s", o.server, o.action)]++
			}
		}
	}
	for k, n := range powerOps {
		if n > unknownPower[k] && !(wentNegative && strings.HasSuffix(k, " off")) {
			bad("server %s: %d power operations nobody's request accounts for (%d requests had their answer lost)",
				k, n, unknownPower[k])
		}
	}

	// 2. No server lost or duplicated.
	byDisplay := map[string][]*fServer{}
	for _, s := range w.servers {
		byDisplay[s.display] = append(byDisplay[s.display], s)
	}
	landed := 0
	for name, ss := range byDisplay {
		r, ok := orders[name]
		switch {
		case !ok:
			bad("server %d (%s, %q) was never ordered by the workload", ss[0].id, ss[0].name, name)
		case r.outcome == refused:
			bad("server %d (%s) exists, but its %s never reached berthd", ss[0].id, ss[0].name, r)
		case len(ss) > 1:
			var ids []string
			for _, s := range ss {
				ids = append(ids, fmt.Sprintf("%d (%s)", s.id, s.name))
			}
			bad("%s made %d servers: %s", r, len(ss), strings.Join(ids, ", "))
		case r.outcome == unknown:
			landed++
		}
	}
	acceptedOrders := 0
	for _, r := range orders {
		if r.outcome != accepted {
			continue
		}
		acceptedOrders++
		s := w.servers[r.server]
		if s == nil {
			bad("server lost: %s answered server %d (%s), which does not exist", r, r.server, r.srvName)
			continue
		}
		if s.name != r.srvName || s.display != r.name {
			bad("%s answered server %d as %s; it is %s (%q)", r, r.server, r.srvName, s.name, s.display)
		}
	}
	if len(w.servers) != acceptedOrders+landed {
		bad("%d servers exist; %d orders were accepted and %d whose answer was lost landed", len(w.servers), acceptedOrders, landed)
	}
	for _, s := range w.servers {
		var provisions, deletes int
		for _, o := range opsOf[s.id] {
			switch o.typ {
			case string(hosting.OpProvision):
				provisions++
			case string(hosting.OpDelete):
				deletes++
			}
		}
		if provisions != 1 {
			bad("%s has %d provisioning operations, want one", sd(s), provisions)
		}
		dr := deleteReqs[s.id]
		acc, wasAccepted := anyAccepted(dr)
		switch {
		case s.deleted && len(dr) == 0:
			bad("server lost: %d (%s) is deleted, but no DELETE was sent for it", s.id, s.name)
		case !s.deleted && wasAccepted:
			bad("%s is live after the %s", sd(s), acc)
		}
		if want := map[bool]int{true: 1, false: 0}[s.deleted]; deletes != want {
			bad("%s (deleted %v) has %d delete operations, want %d", sd(s), s.deleted, deletes, want)
		}
		if s.operation.Valid {
			bad("%s still names operation %d as in progress", sd(s), s.operation.Int64)
		}
		if !s.deleted && !slices.Contains([]string{"running", "stopped"}, s.status) {
			bad("%s settled in status %s", sd(s), s.status)
		}
	}

	// 3. No machine orphaned, none missing: the driver agrees with the servers.
	for _, s := range w.servers {
		m := w.machines[s.name]
		switch {
		case s.provisionOK == 1 && m == nil:
			bad("%s was provisioned, but the driver has no machine %s", sd(s), s.name)
		case s.provisionOK == 0 && m != nil:
			bad("%s was never provisioned, but the driver has its machine", sd(s))
		case m == nil:
		case s.deleted && !m.destroyed:
			bad("orphan: %s is deleted, but its machine is not destroyed (%s)", sd(s), m.state)
		case !s.deleted && m.destroyed:
			bad("%s is live (%s), but its machine was destroyed", sd(s), s.status)
		case !s.deleted && m.state != s.status:
			bad("%s is %s, its machine %s", sd(s), s.status, m.state)
		}
	}
	for name := range w.machines {
		if w.byName[name] == nil {
			bad("orphan: machine %s belongs to no server", name)
		}
	}

	// 4. Snapshots: the driver holds exactly the live ones; every deletion is explained.
	byName := map[string][]*fSnap{}
	for _, sn := range w.snapshots {
		byName[sn.name] = append(byName[sn.name], sn)
		s := w.servers[sn.server]
		if s == nil {
			bad("snapshot %d belongs to server %d, which does not exist", sn.id, sn.server)
			continue
		}
		var snapOps int
		var opOK bool
		for _, o := range opsOf[s.id] {
			if o.typ == string(hosting.OpSnapshot) && o.snapshot.Int64 == sn.id {
				snapOps++
				opOK = o.status == string(hosting.OpSuccess)
			}
		}
		if snapOps != 1 {
			bad("%s has %d snapshot operations, want one", nd(sn), snapOps)
		}
		inDriver := w.simSnaps[[2]string{s.name, fmt.Sprintf("snap-%d", sn.id)}]
		key := resKey(hosting.ResourceSnapshot, sn.id)
		if !sn.deleted {
			if sn.status != string(hosting.SnapshotAvailable) {
				bad("%s settled in status %s", nd(sn), sn.status)
			}
			if s.deleted {
				bad("%s is live, but its server is deleted", nd(sn))
			}
			if !inDriver {
				bad("%s is available, but the driver does not hold it", nd(sn))
			}
			if w.meters[key] {
				bad("%s is live, but its meter is stopped", nd(sn))
			}
		} else {
			if inDriver {
				bad("orphan: %s is deleted, but the driver still holds it", nd(sn))
			}
			if stopped, ok := w.meters[key]; ok && !stopped {
				bad("%s is deleted, but its meter still runs", nd(sn))
			}
			if len(snapDeleteReqs[sn.id]) == 0 && !s.deleted && opOK {
				bad("snapshot lost: %d (%q of server %d) is deleted, but no DELETE was sent for it", sn.id, sn.name, s.id)
			}
			// A deletion of its own (not with its server) removes the data in a job, once.
			if !s.deleted && len(jobsOfSnap[sn.id]) != 1 {
				bad("deleted %s has %d deletion jobs, want one", nd(sn), len(jobsOfSnap[sn.id]))
			}
		}
		if len(jobsOfSnap[sn.id]) > 1 {
			bad("snapshot %d has %d deletion jobs", sn.id, len(jobsOfSnap[sn.id]))
		}
		if n := snapDeleteEvents[sn.id]; n > len(jobsOfSnap[sn.id]) {
			bad("snapshot %d was deleted %d times in the driver by %d jobs", sn.id, n, len(jobsOfSnap[sn.id]))
		}
		if r, ok := anyAccepted(snapDeleteReqs[sn.id]); ok && !sn.deleted {
			bad("snapshot %d is live after the %s", sn.id, r)
		}
		// Billing: an available snapshot's first hour is charged once, one that never
		// became available never.
		want := map[bool]int{true: 1, false: 0}[opOK]
		if n := w.charges[key]; n != want {
			bad("%s (its operation succeeded: %v) was charged %d times, want %d", nd(sn), opOK, n, want)
		}
	}
	for k := range w.simSnaps {
		s := w.byName[k[0]]
		id, _ := strconv.ParseInt(strings.TrimPrefix(k[1], "snap-"), 10, 64)
		if sn := w.snapshots[id]; s == nil || sn == nil || sn.server != s.id || sn.deleted {
			bad("orphan: the driver holds snapshot %s of machine %s that no live snapshot is", k[1], k[0])
		}
	}
	for name, ss := range byName {
		r, ok := snapReqs[name]
		switch {
		case !ok:
			bad("snapshot %d (%q) was never asked for by the workload", ss[0].id, name)
		case r.outcome == refused:
			bad("snapshot %d (%q) exists, but its %s never reached berthd", ss[0].id, name, r)
		case len(ss) > 1:
			bad("%s made %d snapshots", r, len(ss))
		}
	}
	for _, r := range snapReqs {
		if r.outcome != accepted {
			continue
		}
		if sn := w.snapshots[r.snapshot]; sn == nil || sn.name != r.name || sn.server != r.server {
			bad("snapshot lost: %s, and snapshot %d is %+v", r, r.snapshot, sn)
		}
	}

	// 5. The ledger balances, each top-up is in it once, each server's first hour is
	// charged once.
	running := map[int64]int64{}
	for _, x := range w.txs {
		running[x.account] += x.amount
		if x.balance != running[x.account] {
			bad("ledger: transaction %d shows balance %s after it, but the entries up to it sum to %s",
				x.id, hosting.Money(x.balance), hosting.Money(running[x.account]))
		}
	}
	for acct, credit := range w.credit {
		if credit != running[acct] {
			bad("ledger: account %d has credit %s but its transactions sum to %s", acct, hosting.Money(credit), hosting.Money(running[acct]))
		}
	}
	for k, n := range w.periods {
		if n > 1 {
			bad("ledger: %s %s is charged %d times for the hour starting at %s", k[0], k[1], n, k[2])
		}
	}
	topupRows := map[string][]fTx{}
	openingSeen := map[int64]bool{}
	for _, x := range w.txs {
		if x.typ != string(hosting.TxTopup) {
			continue
		}
		// Each account's first entry is its opening credit, once (w.txs is ordered by
		// account, then id).
		if want, ok := openings[x.account]; ok && !openingSeen[x.account] && x.desc == "" {
			openingSeen[x.account] = true
			if amount, _ := hosting.ParseMoney(want); x.amount != int64(amount) {
				bad("ledger: account %d opened with %s, want %s", x.account, hosting.Money(x.amount), want)
			}
			continue
		}
		topupRows[x.desc] = append(topupRows[x.desc], x)
	}
	for acct := range openings {
		if !openingSeen[acct] {
			bad("ledger: account %d has no opening credit", acct)
		}
	}
	for desc, xs := range topupRows {
		r, ok := topupReqs[desc]
		switch {
		case !ok:
			bad("ledger: top-up %q (%d entries, transaction %d) was never made by the workload", desc, len(xs), xs[0].id)
		case len(xs) > 1:
			bad("ledger: top-up %q is in the ledger %d times", desc, len(xs))
		}
		if ok {
			want, _ := hosting.ParseMoney(r.amount)
			if xs[0].amount != int64(want) {
				bad("ledger: top-up %q of %s is in the ledger as %s", desc, r.amount, hosting.Money(xs[0].amount))
			}
		}
	}
	for _, r := range topupReqs {
		xs := topupRows[r.name]
		if r.outcome == accepted && (len(xs) != 1 || xs[0].id != r.tx) {
			bad("ledger: accepted %s (transaction %d) is in the ledger %d times", r, r.tx, len(xs))
		}
	}
	for _, s := range w.servers {
		key := resKey(hosting.ResourceServer, s.id)
		if n := w.charges[key]; n != 1 {
			bad("ledger: %s has %d charges; its first hour is charged once at the order", sd(s), n)
		}
		if n := w.refunds[key]; n != 0 {
			bad("ledger: %s has %d refunds, but its provisioning did not fail", sd(s), n)
		}
		if stopped, ok := w.meters[key]; !ok || stopped != s.deleted {
			bad("%s (deleted %v) has a meter: %v, stopped: %v", sd(s), s.deleted, ok, stopped)
		}
	}
	return out
}
