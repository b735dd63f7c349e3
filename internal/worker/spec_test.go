package worker_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store"
)

// flakyStore is the store with reads of apps and recipes that fail once each, as a
// store away for a moment does.
type flakyStore struct {
	store.Reader
	app, recipe atomic.Int32 // failures left
}

var errStoreAway = errors.New("store: connection reset")

func (s *flakyStore) App(ctx context.Context, id int64) (hosting.App, error) {
	if s.app.Add(-1) >= 0 {
		return hosting.App{}, errStoreAway
	}
	return s.Reader.App(ctx, id)
}

func (s *flakyStore) Recipe(ctx context.Context, accountID, id int64) (hosting.Recipe, error) {
	if s.recipe.Add(-1) >= 0 {
		return hosting.Recipe{}, errStoreAway
	}
	return s.Reader.Recipe(ctx, accountID, id)
}

// creations is a driver that records what each Create is asked to make.
type creations struct {
	compute.Driver
	mu    sync.Mutex
	specs []compute.Spec
}

func (c *creations) Create(ctx context.Context, key string, spec compute.Spec) (compute.Machine, error) {
	c.mu.Lock()
	c.specs = append(c.specs, spec)
	c.mu.Unlock()
	return c.Driver.Create(ctx, key, spec)
}

// TestProvisioningReadsAppAndRecipeOrFails (issue 27): a provisioning that cannot
// read its server's app or recipe (the store away for a moment) does not make the
// machine without them: the attempt fails and is retried, and the next one makes the
// machine with the app's installer and the recipe. Before, the read's error was
// dropped and the machine came up without its script, silently.
func TestProvisioningReadsAppAndRecipeOrFails(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	recipe := h.acct.Do("POST", "/recipes", map[string]any{"name": "hello", "script": "#!/bin/sh\necho recipe\n"}).Want(t, 201).Map(t)
	recipeID := int64(recipe["data"].(map[string]any)["id"].(float64))
	apps, err := h.svc.Apps(h.ctx)
	if err != nil || len(apps) == 0 {
		t.Fatalf("apps: %v, %v", apps, err)
	}
	app := apps[0]
	for _, failing := range []string{"app", "recipe"} {
		t.Run(failing, func(t *testing.T) {
			srv := h.order(t, ops.Order{AppID: &app.ID, RecipeID: &recipeID})
			flaky := &flakyStore{Reader: h.env.App.DB}
			map[string]*atomic.Int32{"app": &flaky.app, "recipe": &flaky.recipe}[failing].Store(1)
			driver := &creations{Driver: h.sim}
			w := h.worker(flaky, driver)

			if err := h.attempt(w, srv.Operation.ID, 1); !errors.Is(err, errStoreAway) {
				t.Errorf("attempt 1 with the %s unreadable: %v, want the store's error (the job retries)", failing, err)
			}
			if len(driver.specs) != 0 {
				t.Fatalf("attempt 1 made the machine without its %s: scripts %q", failing, driver.specs[0].UserScripts)
			}
			if op := h.operation(t, srv.Operation.ID); op.Status != hosting.OpRunning {
				t.Fatalf("after attempt 1: operation %s (%s), want still running", op.Status, op.Error)
			}
			if err := h.attempt(w, srv.Operation.ID, 2); err != nil {
				t.Fatalf("attempt 2: %v", err)
			}
			if want := []string{app.Script, "#!/bin/sh\necho recipe\n"}; len(driver.specs) != 1 || !slices.Equal(driver.specs[0].UserScripts, want) {
				t.Errorf("made %d machines, %+v; want one with the app's installer and the recipe", len(driver.specs), driver.specs)
			}
			if got := h.server(t, srv.ID); got.Status != hosting.StatusRunning {
				t.Errorf("server %s after attempt 2, want running", got.Status)
			}
		})
	}
}

// TestProvisioningOfADeletedRecipeLeavesItOut: a recipe deleted between the order
// and its provisioning (an order keeps the recipe's id, not its script) is left out,
// as before: only a store that cannot answer fails the attempt.
func TestProvisioningOfADeletedRecipeLeavesItOut(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	recipe := h.acct.Do("POST", "/recipes", map[string]any{"name": "gone", "script": "#!/bin/sh\n"}).Want(t, 201).Map(t)
	recipeID := int64(recipe["data"].(map[string]any)["id"].(float64))
	srv := h.order(t, ops.Order{RecipeID: &recipeID})
	h.acct.Do("DELETE", "/recipes/"+itoa(recipeID), nil).Want(t, 204)
	driver := &creations{Driver: h.sim}
	if err := h.attempt(h.worker(h.env.App.DB, driver), srv.Operation.ID, 1); err != nil {
		t.Fatalf("attempt 1: %v", err)
	}
	if len(driver.specs) != 1 || len(driver.specs[0].UserScripts) != 0 {
		t.Errorf("made %+v; want one machine without scripts", driver.specs)
	}
	if got := h.server(t, srv.ID); got.Status != hosting.StatusRunning {
		t.Errorf("server %s, want running", got.Status)
	}
}
