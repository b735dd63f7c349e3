package client_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
	"github.com/berthhq/berth/internal/testenv"
)

// TestEvents: Events walks every event across calls in order, narrows as asked,
// follows new ones as they commit and ends with its context; a bad option is
// ErrValidation.
func TestEvents(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{RateLimit: 1 << 20})
	acct := env.NewAccount("en", "100", "")
	c := newClient(t, env, acct.Token)
	ctx := ctxFor(t)
	var projects []int64
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		p := must[*api.Project](t)(c.CreateProject(ctx, api.ProjectWrite{Name: client.Ptr(n)}))
		projects = append(projects, p.ID)
	}
	if err := c.DeleteProject(ctx, projects[0]); err != nil {
		t.Fatal(err)
	}

	var types []string
	var last int64
	for e, err := range c.Events(ctx, client.EventListOptions{Limit: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		if e.ID <= last {
			t.Fatalf("event %d after %d", e.ID, last)
		}
		last = e.ID
		types = append(types, e.Type)
	}
	want := []string{"billing.topped_up", "project.created", "project.created", "project.created", "project.created", "project.created", "project.deleted"}
	if !slices.Equal(types, want) {
		t.Fatalf("walked %v, want %v", types, want)
	}
	l := must[*api.EventList](t)(c.ListEvents(ctx, client.EventListOptions{Types: []string{"project.deleted"}}))
	if len(l.Data) != 1 || l.Data[0].Resource.ID != projects[0] {
		t.Errorf("project.deleted: %+v", l.Data)
	}
	_, err := c.ListEvents(ctx, client.EventListOptions{Types: []string{"project.renamed"}})
	if e := wantError(t, err, 422, "validation_failed", client.ErrValidation); len(e.Fields["types"]) == 0 {
		t.Errorf("an unknown type: %v", e.Fields)
	}

	// Following: what comes after the cursor arrives as it commits; cancelling ends
	// the walk without an error.
	follow, cancel := context.WithCancel(ctx)
	got := make(chan api.Event)
	done := make(chan error, 1)
	go func() {
		for e, err := range c.Events(follow, client.EventListOptions{After: last, Wait: 5 * time.Second}) {
			if err != nil {
				done <- err
				return
			}
			got <- e
		}
		done <- nil
	}()
	time.Sleep(200 * time.Millisecond)
	must[*api.Project](t)(c.UpdateProject(ctx, projects[1], api.ProjectWrite{Name: client.Ptr("bb")}))
	select {
	case e := <-got:
		if e.Type != "project.updated" || e.Resource.ID != projects[1] {
			t.Errorf("followed %+v", e)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the followed change never came")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("following ended with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("following did not end with its context")
	}
}
