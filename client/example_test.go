package client_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
	"github.com/berthhq/berth/internal/testenv"
)

// The examples run against a real Berth, started once for the package.
var berthURL, berthToken string

func TestMain(m *testing.M) {
	flag.Parse()
	tb := &mainTB{}
	code := func() int {
		defer tb.cleanup()
		env := testenv.New(tb)
		berthURL, berthToken = env.URL, env.NewAccount("en", "100", "").Token
		return m.Run()
	}()
	if tb.failed {
		fmt.Fprintln(os.Stderr, "the examples' Berth reported failures")
		code = 1
	}
	os.Exit(code)
}

// mainTB is the testing.TB of the examples' Berth, which lives outside any test.
type mainTB struct {
	testing.TB // nil: only the methods below are called
	mu         sync.Mutex
	failed     bool
	cleanups   []func()
	dirs       []string
}

func (t *mainTB) Helper()      {}
func (t *mainTB) Name() string { return "examples" }
func (t *mainTB) Cleanup(f func()) {
	t.mu.Lock()
	t.cleanups = append(t.cleanups, f)
	t.mu.Unlock()
}
func (t *mainTB) TempDir() string {
	d, err := os.MkdirTemp("", "berth-examples-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}
func (t *mainTB) Errorf(f string, a ...any) {
	fmt.Fprintf(os.Stderr, f+"\n", a...)
	t.mu.Lock()
	t.failed = true
	t.mu.Unlock()
}
func (t *mainTB) Error(a ...any) { t.Errorf("%s", fmt.Sprint(a...)) }
func (t *mainTB) Fatalf(f string, a ...any) {
	t.Errorf(f, a...)
	panic("examples: " + fmt.Sprintf(f, a...))
}
func (t *mainTB) Fatal(a ...any)          { t.Fatalf("%s", fmt.Sprint(a...)) }
func (t *mainTB) Logf(f string, a ...any) {}
func (t *mainTB) Log(a ...any)            {}
func (t *mainTB) Skip(a ...any)           { t.Fatal(append([]any{"skip: "}, a...)...) }
func (t *mainTB) cleanup() {
	t.mu.Lock()
	fs := t.cleanups
	t.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}

// Order a server in the first location and wait until it runs.
func Example() {
	ctx := context.Background()
	c, err := client.New(client.WithBaseURL(berthURL), client.WithToken(berthToken))
	if err != nil {
		panic(err)
	}
	locations, err := c.ListLocations(ctx)
	if err != nil {
		panic(err)
	}
	loc := locations[0]
	srv, err := c.CreateServer(ctx, api.ServerCreate{
		LocationID:  &loc.ID,
		PlanID:      &loc.Plans[0].ID,
		ImageID:     &loc.Images[0].ID,
		DisplayName: client.Ptr("web"),
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(srv.DisplayName, srv.Status, srv.Operation.Type)

	srv, err = c.WaitServer(ctx, srv.Name, "running")
	if err != nil {
		panic(err)
	}
	fmt.Println(srv.DisplayName, srv.Status, srv.Operation == nil)
	// Output:
	// web provisioning provision
	// web running true
}

// Tell the errors apart with errors.Is, and read their details with errors.As.
func ExampleError() {
	ctx := context.Background()
	c, err := client.New(client.WithBaseURL(berthURL), client.WithToken(berthToken))
	if err != nil {
		panic(err)
	}
	_, err = c.CreateProject(ctx, api.ProjectWrite{Name: client.Ptr("")})
	var e *client.Error
	if errors.Is(err, client.ErrValidation) && errors.As(err, &e) {
		fmt.Println(e.StatusCode, e.Code, e.FieldNames())
	}
	_, err = c.GetServer(ctx, "server-000000")
	fmt.Println(errors.Is(err, client.ErrNotFound))
	// Output:
	// 422 validation_failed [name]
	// true
}

// Walk the whole ledger, page after page.
func ExampleClient_AllTransactions() {
	ctx := context.Background()
	c, err := client.New(client.WithBaseURL(berthURL), client.WithToken(berthToken))
	if err != nil {
		panic(err)
	}
	for tx, err := range c.AllTransactions(ctx) {
		if err != nil {
			panic(err)
		}
		if tx.Type == "topup" {
			fmt.Println(tx.Type, tx.Amount)
		}
	}
	// Output:
	// topup 100.0000
}
