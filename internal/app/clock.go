package app

import (
	"context"
	"time"

	"github.com/berthhq/berth/internal/metrics"
)

// enableTestClocks gives every account a test clock (serve --sandbox): its records'
// times, its charges and its servers' metrics follow it, and an advance fills the
// metrics of the time it skips from the sim driver's load model.
func (a *App) enableTestClocks(ctx context.Context) error {
	svc := a.Service
	if err := svc.EnableTestClocks(ctx); err != nil {
		return err
	}
	svc.Backfill = func(ctx context.Context, accountID int64, from, to time.Time) error {
		h, ok := a.driver.(metrics.HistoryReader)
		if !ok {
			return nil // the driver's machines have no history to tell (sandbox is sim only)
		}
		mine, err := a.DB.AccountMetricTargets(ctx, accountID)
		if err != nil {
			return err
		}
		return metrics.Backfill(ctx, a.DB, h, mine, from, to)
	}
	return nil
}
