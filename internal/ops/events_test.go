package ops_test

import (
	"context"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/testenv"
)

// TestPruneEvents: housekeeping removes the events older than their 30 days, in
// batches until none is left, and keeps the younger ones.
func TestPruneEvents(t *testing.T) {
	t.Parallel()
	clock := testenv.NewFakeClock(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC))
	env := testenv.New(t, testenv.Options{Clock: clock.Now})
	svc, ctx := env.App.Service, context.Background()
	a := newHolder(t, svc, "prune@example.com")
	p := hosting.Principal{Account: a}
	old := make([]hosting.Event, 2406) // more than two batches
	for i := range old {
		old[i] = hosting.Event{AccountID: a.ID, Type: hosting.EventProjectDeleted, Resource: hosting.EventResource{Type: "project", ID: 1},
			Data: []byte(`{}`), CreatedAt: clock.Now()}
	}
	if err := env.App.DB.InTx(ctx, func(tx store.Tx) error { _, err := tx.AddEvents(ctx, old); return err }); err != nil {
		t.Fatal(err)
	}
	clock.Set(clock.Now().Add(20 * 24 * time.Hour))
	young := "young"
	if _, err := svc.CreateProject(ctx, p, &young); err != nil {
		t.Fatal(err)
	}
	clock.Set(clock.Now().Add(11 * 24 * time.Hour)) // the first 2406 are 31 days old, the last 11 days
	// The periodic housekeeping of the test's Berth may prune some of them first.
	n, err := svc.PruneEvents(ctx)
	if err != nil || n > 2406 {
		t.Fatalf("PruneEvents: %d, %v; want at most the 2406 old events", n, err)
	}
	left, err := svc.Events(ctx, p, hosting.EventFilter{Limit: 10}, 0)
	if err != nil || len(left) != 1 || left[0].Type != hosting.EventProjectCreated {
		t.Fatalf("left %+v, %v; want the young project's event", left, err)
	}
	if n, err := svc.PruneEvents(ctx); err != nil || n != 0 {
		t.Errorf("a second prune: %d, %v", n, err)
	}
}
