package main

import (
	"fmt"
	"time"
)

// Issue 26, item 12: a snapshot deletion accepted while its server was busy, left
// "deleting" forever once the operation it waited for had ended (seen on PostgreSQL
// after a kill). Every faultSchedEvery-th round, just before the kill, a client of its
// own account takes a snapshot of its one server and asks for its deletion at once —
// scheduled, as the snapshot is being made — and the kill lands 0-400 ms later, about
// when that snapshot's operation ends and runs the deletion (200 ms at the fault
// test's scale). Whatever the kill cut, the deletion must end: the settled world shows
// the snapshot deleted (checkFault), and its data removed from the machine once.
const faultSchedEvery = 4 // rounds 4, 8, ...: not those of the bursts (2, 6, ...)

// faultSchedKillWithin bounds how long after the scheduled deletion the kill lands.
const faultSchedKillWithin = 400 * time.Millisecond

// scheduledDeletion takes a snapshot of s and deletes it at once. It reports whether
// the deletion was accepted as scheduled (a server still busy with what the last
// restart resumed refuses the snapshot: 409, and the round has nothing to cut; so has
// one whose snapshot was made before the deletion came, which deletes it at once).
func (c *faultClient) scheduledDeletion(s *ownedServer) bool {
	if code, m, err := c.call("GET", fmt.Sprintf("/servers/%d", s.id), nil); err == nil && code == 200 {
		data, _ := m["data"].(map[string]any)
		if op, _ := data["operation"].(map[string]any); op != nil {
			opID, _ := op["id"].(float64)
			_, _, _ = c.call("GET", fmt.Sprintf("/operations/%d?wait=5", int64(opID)), nil)
		}
	}
	c.seq++
	r := faultReq{kind: "snapshot", server: s.id, name: fmt.Sprintf("fault-sched-%d", c.seq)}
	data, ok := c.send(r, "POST", fmt.Sprintf("/servers/%d/snapshots", s.id), map[string]any{"name": r.name})
	if !ok {
		return false
	}
	id, _ := data["id"].(float64)
	d := faultReq{kind: "snapshot-delete", server: s.id, snapshot: int64(id)}
	data, out := c.sendOutcome(d, "DELETE", fmt.Sprintf("/servers/%d/snapshots/%d", s.id, int64(id)), nil)
	answered := time.Now()
	if out != accepted {
		s.snaps = append(s.snaps, int64(id)) // not deleted (or not known to be): left to the end's checks
		return false
	}
	if res, _ := data["result"].(string); res != "scheduled" {
		if res == "deleted" && c.snapshotEndedBy(s.id, answered) {
			return false // made before the deletion came: nothing scheduled for the kill to cut
		}
		c.broken = append(c.broken, fmt.Sprintf("deletion of snapshot %d, asked for while it was being made, answered %q, want scheduled",
			int64(id), res))
	}
	return true
}

// snapshotEndedBy reports whether server's newest snapshot operation had ended
// successfully by t: then a deletion answered by t may rightly find the snapshot made
// and delete it at once (on a loaded machine the 200 ms of the snapshot can pass
// between its answer and the deletion's arrival).
func (c *faultClient) snapshotEndedBy(server int64, t time.Time) bool {
	code, m, err := c.call("GET", fmt.Sprintf("/servers/%d/operations", server), nil)
	if err != nil || code != 200 {
		return false
	}
	ops, _ := m["data"].([]any)
	for _, o := range ops { // newest first
		op, _ := o.(map[string]any)
		if op["type"] != "snapshot" {
			continue
		}
		finished, _ := op["finished_at"].(string)
		at, err := time.Parse(time.RFC3339Nano, finished)
		return op["status"] == "success" && err == nil && !at.After(t)
	}
	return false
}

// orderAndWait orders a server for the client and waits until it is running.
func (c *faultClient) orderAndWait() (*ownedServer, error) {
	c.seq++
	r := faultReq{kind: "order", name: fmt.Sprintf("fault-c%d-o%d", c.id, c.seq)}
	data, ok := c.send(r, "POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1, "display_name": r.name})
	if !ok {
		return nil, fmt.Errorf("order for the scheduled-deletion rounds refused (%d)", c.lastCode)
	}
	id, _ := data["id"].(float64)
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		code, m, err := c.call("GET", fmt.Sprintf("/servers/%d", int64(id)), nil)
		if err == nil && code == 200 {
			if data, _ := m["data"].(map[string]any); data["status"] == "running" && data["operation"] == nil {
				return &ownedServer{id: int64(id)}, nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil, fmt.Errorf("server %d of the scheduled-deletion rounds not running within a minute", int64(id))
}
