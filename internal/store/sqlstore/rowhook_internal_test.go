package sqlstore

import (
	"testing"

	"modernc.org/sqlite"
)

// fakeHooks is a connection's hooks: which pre-update hook is on.
type fakeHooks struct{ on sqlite.PreUpdateHookFn }

func (f *fakeHooks) RegisterPreUpdateHook(fn sqlite.PreUpdateHookFn) { f.on = fn }
func (f *fakeHooks) RegisterCommitHook(sqlite.CommitHookFn)          {}
func (f *fakeHooks) RegisterRollbackHook(sqlite.RollbackHookFn)      {}

// A transaction that turns its hook off late (database/sql rolled it back when its
// context ended and gave the connection to the next) leaves the next one's hook on.
func TestRowHookOffOnlyItsOwn(t *testing.T) {
	t.Parallel()
	conn := &fakeHooks{}
	h := &rowHook{conn: conn}
	var first, next changedRows
	if !first.on(h, kindServers, false) {
		t.Fatal("a statement of servers did not ask for the hook to be turned off after it")
	}
	if conn.on == nil {
		t.Fatal("no hook on for a statement of servers")
	}
	next.on(h, kindServers, true) // a query: on to the transaction's end
	first.pause()                 // late
	if conn.on == nil {
		t.Fatal("the late pause of another transaction turned the hook off")
	}
	conn.on(sqlite.SQLitePreUpdateData{Op: 23, DatabaseName: "main", TableName: "servers", OldRowID: 7, NewRowID: 7})
	next.stop()
	if conn.on != nil {
		t.Error("the hook stayed on after its transaction stopped it")
	}
	if !next.precise() || len(next.servers) != 1 || next.servers[0] != 7 || len(first.servers) != 0 {
		t.Errorf("rows noted: next %v (precise %v), first %v; want server 7 for next only", next.servers, next.precise(), first.servers)
	}
	// A statement of no cached table leaves the hook as it is.
	var other changedRows
	if other.on(h, kindDNS, false) || conn.on != nil {
		t.Error("a statement of no cached table turned the hook on")
	}
}
