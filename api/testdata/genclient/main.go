// Command genclient uses Berth's API the way a client developer does with a client
// that oapi-codegen generated from api/openapi.yaml. TestGeneratedClient
// (api/generated_client_test.go) generates that client into package berthclient of a
// temporary module, compiles this program beside it and runs it against a live Berth
// (BERTH_URL, ending in /v1, and BERTH_TOKEN, a token with every scope).
//
// It compiles only if the document gives generated clients what they need: error
// codes that are typed strings with a constant for each value, metric timestamps that
// are int64, nullable fields that are pointers. Running it checks that Berth's real
// answers decode into those types. It exits 1 naming the first thing that went wrong.
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"berthclientcheck/berthclient"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "genclient:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	token := os.Getenv("BERTH_TOKEN")
	c, err := berthclient.NewClientWithResponses(os.Getenv("BERTH_URL"),
		berthclient.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+token)
			return nil
		}))
	if err != nil {
		return err
	}

	// (a) An error's code is a typed string that compares equal to its constant,
	// the route's own and the one of every code.
	missing, err := c.GetServerWithResponse(ctx, "999999")
	if err != nil {
		return err
	}
	if missing.StatusCode() != http.StatusNotFound || missing.JSON404 == nil {
		return fmt.Errorf("GET /servers/999999: %d %s, want a decoded 404", missing.StatusCode(), missing.Body)
	}
	if missing.JSON404.Code != berthclient.NotFoundCodeNotFound {
		return fmt.Errorf("GET /servers/999999: code %q, want the constant NotFoundCodeNotFound", missing.JSON404.Code)
	}
	if berthclient.ErrorCode(missing.JSON404.Code) != berthclient.ErrorCodeNotFound {
		return fmt.Errorf("GET /servers/999999: code %q is not ErrorCodeNotFound", missing.JSON404.Code)
	}

	locations, err := c.ListLocationsWithResponse(ctx)
	if err != nil {
		return err
	}
	if locations.JSON200 == nil || len(locations.JSON200.Data) == 0 {
		return fmt.Errorf("GET /locations: %d %s, want locations", locations.StatusCode(), locations.Body)
	}
	loc := locations.JSON200.Data[0]
	order := berthclient.ServerCreate{PlanId: loc.Plans[0].Id, LocationId: loc.Id, ImageId: &loc.Images[0].Id}

	tooLong := order
	tooLong.DisplayName = ptr(strings.Repeat("x", 65)) // the schema's maxLength is 64
	invalid, err := c.CreateServerWithResponse(ctx, &berthclient.CreateServerParams{}, tooLong)
	if err != nil {
		return err
	}
	if invalid.JSON422 == nil || invalid.JSON422.Code != berthclient.ValidationFailedCodeValidationFailed ||
		len(invalid.JSON422.Errors["display_name"]) == 0 {
		return fmt.Errorf("POST /servers with a 65-character display_name: %d %s, want 422 validation_failed on display_name",
			invalid.StatusCode(), invalid.Body)
	}

	created, err := c.CreateServerWithResponse(ctx, &berthclient.CreateServerParams{}, order)
	if err != nil {
		return err
	}
	if created.JSON201 == nil || created.JSON201.Data.Operation == nil {
		return fmt.Errorf("POST /servers: %d %s, want 201 with an operation", created.StatusCode(), created.Body)
	}
	server := created.JSON201.Data
	var opID int64 = server.Operation.Id
	op, err := c.GetOperationWithResponse(ctx, opID, &berthclient.GetOperationParams{Wait: ptr(60)})
	if err != nil {
		return err
	}
	if op.JSON200 == nil || op.JSON200.Data.Status != berthclient.OperationStatusSuccess {
		return fmt.Errorf("GET /operations/%d?wait=60: %d %s, want success", opID, op.StatusCode(), op.Body)
	}

	// An idle server's operation is null: a nil pointer, not a decoding error.
	got, err := c.GetServerWithResponse(ctx, server.Name)
	if err != nil {
		return err
	}
	if got.JSON200 == nil || got.JSON200.Data.Status != berthclient.ServerStatusRunning || got.JSON200.Data.Operation != nil {
		return fmt.Errorf("GET /servers/%s: %d %s, want running with operation null", server.Name, got.StatusCode(), got.Body)
	}

	// (b) A metric point's timestamp is an int64, exact (a float32 would be off by
	// up to two minutes at today's Unix times).
	var points berthclient.MetricSeries
	var step int
	for len(points) == 0 {
		m, err := c.GetServerMetricsWithResponse(ctx, server.Name, &berthclient.GetServerMetricsParams{})
		if err != nil {
			return err
		}
		if m.JSON200 == nil {
			return fmt.Errorf("GET /servers/%s/metrics: %d %s", server.Name, m.StatusCode(), m.Body)
		}
		points, step = m.JSON200.Data.Cpu, m.JSON200.Data.StepSeconds
		if len(points) == 0 {
			select {
			case <-ctx.Done():
				return fmt.Errorf("GET /servers/%s/metrics: no CPU points in time", server.Name)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	var at int64
	at, err = points[0][0].AsMetricTime()
	if err != nil {
		return fmt.Errorf("metric point %s: time: %w", points[0][0], err)
	}
	value, err := points[0][1].AsMetricValue()
	if err != nil {
		return fmt.Errorf("metric point %s: value: %w", points[0][1], err)
	}
	now := time.Now().Unix()
	if at%int64(step) != 0 || at > now || at < now-3600-int64(step) || value < 0 || value > 100 {
		return fmt.Errorf("metric point [%d, %g] with step %d at %d: not a bucket of the last hour", at, value, step, now)
	}

	billing, err := c.GetBillingWithResponse(ctx)
	if err != nil {
		return err
	}
	if billing.JSON200 == nil {
		return fmt.Errorf("GET /billing: %d %s", billing.StatusCode(), billing.Body)
	}
	budget := "null"
	if b := billing.JSON200.Data.Budget; b != nil {
		budget = *b
	}

	fmt.Printf("genclient: 404 code %s; 422 code %s; server %s ran operation %d; cpu point [%d, %g] (step %d); budget %s\n",
		missing.JSON404.Code, invalid.JSON422.Code, server.Name, opID, at, value, step, budget)
	return nil
}

func ptr[T any](v T) *T { return &v }
