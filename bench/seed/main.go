// Command seed fills a fresh Berth data directory for the benchmarks: one account
// (server quota N + 20,000, room for the orders a benchmark makes; ample credit),
// one token with every scope, and N servers.
//
// Two modes:
//
//	-mode order  each server through ops.Service.OrderServer, as the API does: one
//	             transaction per server, each enqueuing its provisioning job (the
//	             jobs run when `berthd serve` starts).
//	-mode store  servers written straight through the store in batched transactions
//	             (a.DB.InTx + tx.CreateServer), already running with addresses,
//	             and no jobs. For when -mode order is too slow.
//
// It prints one JSON object on stdout:
// {"token":..., "account_id":..., "server_ids":[first,last], "seed_seconds":..., "mode":...}.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/berthhq/berth/internal/app"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store"
)

func main() {
	data := flag.String("data", "", "data directory (created; should be empty)")
	database := flag.String("database", "", "PostgreSQL database URL instead of -data (should be empty)")
	n := flag.Int("n", 10000, "servers to create")
	mode := flag.String("mode", "order", "order (ops.Service.OrderServer, one tx each) or store (batched store inserts)")
	batch := flag.Int("batch", 1000, "servers per transaction in -mode store")
	flag.Parse()
	if (*data == "") == (*database == "") || *n <= 0 || *batch <= 0 || (*mode != "order" && *mode != "store") {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*data, *database, *n, *mode, *batch); err != nil {
		fmt.Fprintln(os.Stderr, "seed:", err)
		os.Exit(1)
	}
}

// Plan 1 at location 1 (fsn1) with image 1 (ubuntu): no capacity limit in the
// default catalog.
const planID, locationID, imageID int64 = 1, 1, 1

func run(data, database string, n int, mode string, batch int) error {
	ctx := context.Background()
	a, err := app.Open(ctx, app.Config{DataDir: data, DatabaseURL: database, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	defer a.Close(context.Background())
	svc := a.Service

	credit, err := hosting.ParseMoney("1000000")
	if err != nil {
		return err
	}
	acct, err := svc.CreateAccount(ctx, ops.NewAccount{Email: "bench@berth.local", Password: "bench-password",
		Name: "Bench", Language: "en", Credit: credit, Quotas: map[string]int{"servers": n + 20000}})
	if err != nil {
		return fmt.Errorf("account: %w", err)
	}
	var scopes []string
	for _, s := range hosting.AllScopes {
		scopes = append(scopes, string(s))
	}
	_, secret, err := svc.CreateToken(ctx, acct.ID, "bench", strings.Join(scopes, ","), 0)
	if err != nil {
		return fmt.Errorf("token: %w", err)
	}
	p, err := svc.Authenticate(ctx, secret)
	if err != nil {
		return fmt.Errorf("authenticate: %w", err)
	}

	start := time.Now()
	var first, last int64
	note := func(id int64) {
		if first == 0 {
			first = id
		}
		last = id
	}
	switch mode {
	case "order":
		pl, loc, img := planID, locationID, imageID
		for i := range n {
			srv, err := svc.OrderServer(ctx, p, ops.Order{PlanID: &pl, LocationID: &loc, ImageID: &img})
			if err != nil {
				return fmt.Errorf("order server %d: %w", i+1, err)
			}
			note(srv.ID)
			if (i+1)%1000 == 0 {
				fmt.Fprintf(os.Stderr, "seed: %d servers ordered (%.1fs)\n", i+1, time.Since(start).Seconds())
			}
		}
	case "store":
		plan, err := a.DB.Plan(ctx, planID)
		if err != nil {
			return fmt.Errorf("plan: %w", err)
		}
		// Names are drawn at random as an order's are, and redrawn when one repeats:
		// with 10,000 servers two of 36^6 names collide in about one seed in 40, and a
		// batch cannot retry one insert as an order does.
		seen := map[string]bool{}
		for done := 0; done < n; {
			k := min(batch, n-done)
			err := a.DB.InTx(ctx, func(tx store.Tx) error {
				for j := range k {
					name := hosting.NewServerName()
					for seen[name] {
						name = hosting.NewServerName()
					}
					seen[name] = true
					srv := hosting.Server{AccountID: acct.ID, Name: name, DisplayName: name, Status: hosting.StatusRunning,
						LocationID: locationID, PlanID: plan.ID, ImageID: imageID,
						VCPUs: plan.VCPUs, MemoryMB: plan.MemoryMB, DiskGB: plan.DiskGB, CreatedAt: svc.Now()}
					id, err := tx.CreateServer(ctx, srv)
					if err != nil {
						return fmt.Errorf("create server %d: %w", done+j+1, err)
					}
					// Addresses in the shape the sim driver gives, so that the body
					// is as long as a provisioned server's.
					v4 := fmt.Sprintf("100.64.%d.%d", (id>>8)&255, id&255)
					// Two groups: one would not hold an id past 65,535.
					v6 := fmt.Sprintf("2001:db8:%x:%x::1", id>>16, id&0xffff)
					if err := tx.SetServerAddresses(ctx, id, v4, v6); err != nil {
						return err
					}
					note(id)
				}
				return nil
			})
			if err != nil {
				return err
			}
			done += k
			fmt.Fprintf(os.Stderr, "seed: %d servers written (%.1fs)\n", done, time.Since(start).Seconds())
		}
	}
	elapsed := time.Since(start)
	out := map[string]any{"token": secret, "account_id": acct.ID, "server_ids": []int64{first, last},
		"seed_seconds": elapsed.Seconds(), "mode": mode, "servers": n}
	return json.NewEncoder(os.Stdout).Encode(out)
}
