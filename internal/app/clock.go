package app

import (
	"context"
	"time"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/metrics"
)

// backfill fills the metrics of the time a test clock's advance skips (serve
// --sandbox) from the driver's load model: the account's servers' charts then show
// what they would have, had the time passed.
func (a *App) backfill(ctx context.Context, accountID int64, from, to time.Time) error {
	h, ok := compute.As[metrics.HistoryReader](a.driver)
	if !ok {
		return nil // the driver's machines have no history to tell (the sandbox is sim only)
	}
	mine, err := a.DB.AccountMetricTargets(ctx, accountID)
	if err != nil {
		return err
	}
	return metrics.Backfill(ctx, a.metricsBackend(), h, mine, from, to)
}
