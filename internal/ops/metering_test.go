package ops_test

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/billing"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/testenv"
)

// hoursPerTx is the store with a record of the meter hours each committed
// transaction charged (those that charged any).
type hoursPerTx struct {
	store.Store
	mu  sync.Mutex
	txs []int
}

func (s *hoursPerTx) InTx(ctx context.Context, fn func(tx store.Tx) error) error {
	var hours int
	err := s.Store.InTx(ctx, func(tx store.Tx) error {
		hours = 0 // a retried transaction counts once
		return fn(chargeCountingTx{tx, &hours})
	})
	if err == nil && hours > 0 {
		s.mu.Lock()
		s.txs = append(s.txs, hours)
		s.mu.Unlock()
	}
	return err
}

func (s *hoursPerTx) take() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.txs
	s.txs = nil
	return out
}

type chargeCountingTx struct {
	store.Tx
	hours *int
}

func (t chargeCountingTx) ChargeDue(ctx context.Context, st store.ChargeStep) (store.ChargeResult, error) {
	res, err := t.Tx.ChargeDue(ctx, st)
	*t.hours += res.Hours
	return res, err
}

// TestMeteringTransactionsFollowTheirTarget (issue 34): a metering pass charges as
// many meter hours a transaction as the last ones charged in Deps.MeterTxTarget, up
// to Deps.MeterBatch, half of it first (in whole accounts): transactions that take
// longer than the target are made smaller (down to 500 hours), quick ones larger.
// Every hour is charged once either way.
func TestMeteringTransactionsFollowTheirTarget(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	ctx := context.Background()
	// 24 accounts of 50 meters: a step charges whole accounts, so the limits below
	// fall between two.
	const meters, perAccount = 1200, 50
	// Years ahead: the Env's own periodic metering pass, at the real time, beside
	// this test's services, finds none of these meters due (on a loaded machine it
	// ran meanwhile and charged the hours since a past t0 itself).
	t0 := time.Date(2036, 3, 10, 10, 0, 0, 0, time.UTC)
	var accounts []int64
	for range meters / perAccount {
		accounts = append(accounts, env.NewAccount("en", "1000", "").ID)
	}
	err := env.App.DB.InTx(ctx, func(tx store.Tx) error {
		for i := range meters {
			if _, err := tx.OpenMeter(ctx, hosting.Meter{AccountID: accounts[i/perAccount], ResourceType: hosting.ResourceServer,
				ResourceID: int64(1_000_000 + i), ResourceName: "metered", Rate: 1, StartedAt: t0, BilledFrom: t0.Add(time.Hour),
				MonthStart: billing.MonthStart(t0)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	counted := &hoursPerTx{Store: env.App.DB}
	for i, c := range []struct {
		target time.Duration
		want   []int // the hours each transaction charged
	}{
		// Quick: 500 (half of 1,000), then the rest, which twice the pace allows.
		{time.Hour, []int{500, 700}},
		// Every transaction slower than its target: never more than the least.
		{time.Nanosecond, []int{500, 500, 200}},
	} {
		now := t0.Add(time.Duration(i+1)*time.Hour + time.Minute)
		svc := ops.New(ops.Deps{Store: counted, Log: slog.New(slog.DiscardHandler), Clock: func() time.Time { return now },
			MeterBatch: 1000, MeterTxTarget: c.target})
		res, err := svc.Meter(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := counted.take(); res.Hours != meters || !slices.Equal(got, c.want) {
			t.Errorf("target %v: %d hours in transactions of %v; want %d in %v", c.target, res.Hours, got, meters, c.want)
		}
	}
	env.AssertLedger(t)
}
