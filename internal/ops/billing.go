package ops

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/berthhq/berth/internal/billing"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// Billing (docs/api.md, Billing): every billable resource has a meter; its first hour is
// charged when it comes into being, each later hour by the metering pass as it starts.

// openServerMeter starts billing a server being ordered and charges its first hour,
// which the credit must cover (CodeInsufficientCredit on plan_id otherwise: the check
// and the debit are one statement, so parallel orders cannot overdraw).
func (s *Service) openServerMeter(ctx context.Context, tx store.Tx, acct hosting.Account, srv hosting.Server, plan hosting.Plan) error {
	now := s.NowFor(acct.ID)
	rate, cap := billing.ServerRate(plan)
	first := billing.HourCharge(rate, cap, 0)
	if first > 0 {
		_, err := tx.AddCoveredTransaction(ctx, hosting.Transaction{AccountID: acct.ID, Type: hosting.TxCharge, Amount: -first,
			ResourceType: hosting.ResourceServer, ResourceID: &srv.ID, ResourceName: srv.Name, PeriodStart: &now, CreatedAt: now})
		if errors.Is(err, store.ErrInsufficientCredit) {
			var v hosting.Validation
			hosting.CreditTooLow(&v, acct, plan)
			return v.Err()
		}
		if err != nil {
			return internal("first hour", err)
		}
	}
	next := now.Add(billing.Hour)
	_, err := tx.OpenMeter(ctx, hosting.Meter{AccountID: acct.ID, ResourceType: hosting.ResourceServer, ResourceID: srv.ID,
		ResourceName: srv.Name, Rate: rate, MonthlyCap: cap, StartedAt: now, BilledFrom: next,
		MonthStart: billing.MonthStart(now), MonthCharged: first})
	return internal("open meter", err)
}

// openSnapshotMeter starts billing a snapshot that has become available and charges
// its first hour. Its data exists already, so the charge is made even when it takes
// the credit below zero, which suspends the account's servers.
func (s *Service) openSnapshotMeter(ctx context.Context, tx store.Tx, snap hosting.Snapshot, sizeGB int) error {
	srv, err := tx.ServerAny(ctx, snap.ServerID)
	if err != nil {
		return err
	}
	loc, err := tx.Location(ctx, srv.LocationID)
	if err != nil {
		return err
	}
	now := s.NowFor(snap.AccountID)
	rate := billing.SnapshotRate(sizeGB, loc.SnapshotPriceGBHour)
	if rate > 0 {
		t, err := tx.AddTransaction(ctx, hosting.Transaction{AccountID: snap.AccountID, Type: hosting.TxCharge, Amount: -rate,
			ResourceType: hosting.ResourceSnapshot, ResourceID: &snap.ID, ResourceName: snap.Name, PeriodStart: &now, CreatedAt: now})
		if err != nil {
			return err
		}
		if t.BalanceAfter < 0 {
			if err := s.suspendForCredit(ctx, tx, snap.AccountID); err != nil {
				return err
			}
		}
	}
	next := now.Add(billing.Hour)
	_, err = tx.OpenMeter(ctx, hosting.Meter{AccountID: snap.AccountID, ResourceType: hosting.ResourceSnapshot, ResourceID: snap.ID,
		ResourceName: snap.Name, Rate: rate, StartedAt: now, BilledFrom: next, MonthStart: billing.MonthStart(now), MonthCharged: rate})
	if errors.Is(err, store.ErrConflict) {
		return nil // opened by an earlier try of the same step
	}
	return err
}

// refundProvisioning gives back what a server whose provisioning failed was charged,
// and stops its meter: a server that never ran costs nothing.
func (s *Service) refundProvisioning(ctx context.Context, tx store.Tx, srv hosting.Server) error {
	if err := tx.StopMeter(ctx, hosting.ResourceServer, srv.ID, srv.CreatedAt); err != nil {
		return err
	}
	if err := s.refundLicenses(ctx, tx, srv); err != nil {
		return err
	}
	charged, err := tx.Charged(ctx, hosting.ResourceServer, srv.ID)
	if err != nil || charged <= 0 {
		return err
	}
	now := s.NowFor(srv.AccountID)
	start := srv.CreatedAt
	t, err := tx.AddTransaction(ctx, hosting.Transaction{AccountID: srv.AccountID, Type: hosting.TxRefund, Amount: charged,
		ResourceType: hosting.ResourceServer, ResourceID: &srv.ID, ResourceName: srv.Name, PeriodStart: &start, CreatedAt: now})
	if err != nil {
		return err
	}
	return s.afterCredit(ctx, tx, t)
}

// resumeServerMeter bills a server again whose meter a failed provisioning stopped,
// once a reinstall has made it a working server.
func (s *Service) resumeServerMeter(ctx context.Context, tx store.Tx, srv hosting.Server) error {
	m, err := tx.Meter(ctx, hosting.ResourceServer, srv.ID)
	if err != nil || m.StoppedAt == nil {
		return err
	}
	return tx.RestartMeter(ctx, hosting.ResourceServer, srv.ID, s.NowFor(srv.AccountID))
}

// stopServerMeters stops billing a deleted server and its snapshots.
func (s *Service) stopServerMeters(ctx context.Context, tx store.Tx, srv hosting.Server, snaps []hosting.Snapshot) error {
	now := s.NowFor(srv.AccountID)
	if err := tx.StopMeter(ctx, hosting.ResourceServer, srv.ID, now); err != nil {
		return internal("stop meter", err)
	}
	for _, snap := range snaps {
		if err := tx.StopMeter(ctx, hosting.ResourceSnapshot, snap.ID, now); err != nil {
			return internal("stop meter", err)
		}
	}
	return nil
}

// repriceServer bills a rescaled server at its new plan's price from its next hour.
func (s *Service) repriceServer(ctx context.Context, tx store.Tx, serverID int64, plan hosting.Plan) error {
	rate, cap := billing.ServerRate(plan)
	err := tx.SetMeterRate(ctx, hosting.ResourceServer, serverID, rate, cap)
	if errors.Is(err, store.ErrNotFound) {
		return nil // never billed (its provisioning failed)
	}
	return err
}

// suspendForCredit suspends an account's servers because its credit is exhausted;
// each running one is powered off in the background, and the holder is mailed.
func (s *Service) suspendForCredit(ctx context.Context, tx store.Tx, accountID int64) error {
	var ids []int64
	err := s.suspensionHooks(ctx, tx, accountID, 0, func() (err error) { ids, err = tx.SuspendForCredit(ctx, accountID); return err })
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := s.followSuspension(ctx, tx, id); err != nil {
			return err
		}
	}
	if len(ids) == 0 {
		return nil
	}
	s.log.Info("servers suspended for exhausted credit", "account", accountID, "servers", len(ids))
	if err := s.emitAccount(ctx, tx, hosting.EventAccountSuspended, accountID, hosting.AccountEventData{Reason: "credit"}); err != nil {
		return err
	}
	return s.mailSuspended(ctx, tx, accountID)
}

// afterCredit lifts a suspension for credit once the credit is above zero again.
func (s *Service) afterCredit(ctx context.Context, tx store.Tx, t hosting.Transaction) error {
	if t.BalanceAfter <= 0 {
		return nil
	}
	var n int
	err := s.suspensionHooks(ctx, tx, t.AccountID, 0, func() (err error) { n, err = tx.LiftCreditSuspension(ctx, t.AccountID); return err })
	if err != nil || n == 0 {
		return err
	}
	s.log.Info("suspension for credit lifted", "account", t.AccountID, "servers", n)
	return s.emitAccount(ctx, tx, hosting.EventAccountUnsuspended, t.AccountID, hosting.AccountEventData{Reason: "credit"})
}

// MeterResult is what a metering pass did.
type MeterResult struct {
	Hours     int           // meter hours settled, and license months (docs/api.md, Licenses)
	Total     hosting.Money // charged in all
	Overdrawn int           // accounts it took below zero
}

// Meter runs a metering pass at the service's clock: every hour of every meter that
// has started and is not charged yet is charged now, oldest first, so after downtime
// the missed hours are caught up. Each (resource, hour) is charged once: the meters
// say which hour is next, and the ledger's unique index refuses a second charge.
// Passes may run at any time, any number of times, in several processes at once.
// Under test clocks, the accounts whose clocks run ahead are charged up to their own
// now. Deps.Telemetry is told how long it took and whether it failed.
func (s *Service) Meter(ctx context.Context) (MeterResult, error) {
	start := time.Now()
	out, err := s.meter(ctx)
	if s.telemetry != nil {
		s.telemetry.MeterPassed(time.Since(start), err)
	}
	return out, err
}

// meter is Meter's pass: the system clock's hours, then those of the accounts whose
// test clocks run ahead.
func (s *Service) meter(ctx context.Context) (MeterResult, error) {
	out, err := s.meterPass(ctx, 0, s.Now())
	for id := range s.clocks.aheadAccounts() {
		if err != nil {
			break
		}
		var got MeterResult
		got, err = s.meterPass(ctx, id, s.NowFor(id))
		out.Hours += got.Hours
		out.Total += got.Total
		out.Overdrawn += got.Overdrawn
	}
	return out, err
}

// meterPass charges every hour due at now: of account's meters, or of all when
// account is 0.
func (s *Service) meterPass(ctx context.Context, account int64, now time.Time) (MeterResult, error) {
	var out MeterResult
	for {
		var got MeterResult
		done := false
		limit := int(s.meterLimit.Load())
		start := time.Now()
		licenses := false
		err := s.store.InTx(ctx, func(tx store.Tx) error {
			var err error
			got, done, licenses, err = s.meterTx(ctx, tx, account, now, limit)
			return err
		})
		if err != nil {
			return out, fmt.Errorf("metering: %w", err)
		}
		// A transaction of license months (bounded by licenseBatch) says nothing of
		// the pace of meter hours.
		if next := nextMeterLimit(limit, got.Hours, time.Since(start), s.meterTxTarget, s.meterBatch); next != limit && !licenses {
			s.meterLimit.Store(int64(next))
		}
		out.Hours += got.Hours
		out.Total += got.Total
		out.Overdrawn += got.Overdrawn
		if done {
			return out, nil
		}
	}
}

// nextMeterLimit is the most meter hours the metering transaction after one that
// charged hours in took, under limit, may charge: as many as take target at the
// pace that one went, at most twice limit (a transaction that found the database
// idle says little of the next) and most, at least an eighth of most or
// minMeterBatch.
//
// The pace is per hour: a step's fixed cost, as finding its batch, must stay small
// beside its hours' (on PostgreSQL the index meters_next is in the order a batch is
// taken in), and the floor keeps a pass from crawling in tiny transactions if it
// does not. A transaction that charged less than half its limit ran out of due
// hours (a pass of every minute charges a few): its pace, mostly the cost of any
// transaction, says nothing of a larger one, unless it took longer than target all
// the same.
func nextMeterLimit(limit, hours int, took, target time.Duration, most int) int {
	if hours <= 0 || took <= 0 || (hours < limit/2 && took <= target) {
		return limit
	}
	// In floating point: hours times nanoseconds outgrows an int64 (a pace, not money).
	n := int(min(float64(hours)*float64(target)/float64(took), 2*float64(limit)))
	return max(min(n, most), min(max(minMeterBatch, most/8), most))
}

// meterTx is one transaction of a metering pass: the license months due first, up
// to licenseBatch of them (licenses: it charged those alone), or else up to
// stepsPerTx steps and limit meter hours, so that catching up many hours does not
// pay a commit per hour, nor holds the database's one writer for long, however many
// meters are due (issue 34: the longest transaction is bounded, not the
// installation's size). done: nothing is due any more.
func (s *Service) meterTx(ctx context.Context, tx store.Tx, account int64, now time.Time, limit int) (got MeterResult, done, licenses bool, err error) {
	// Another pass (another process's, or the periodic one beside an operator's)
	// charges nothing twice anyway, but would find the hours it saw due already
	// charged.
	if err := tx.Serialize(ctx, "meter"); err != nil {
		return got, false, false, err
	}
	// The licenses' months first (docs/api.md, Licenses): each a step of its own.
	lic, done, err := s.chargeLicenseMonths(ctx, tx, account, now, min(limit, s.licenseBatch))
	got.Hours, got.Total, got.Overdrawn = lic.Hours, lic.Total, lic.Overdrawn
	if err != nil || !done {
		return got, false, true, err
	}
	const stepsPerTx = 48 // a meter hours behind takes a step an hour
	for steps := 0; steps < stepsPerTx && got.Hours < limit; steps++ {
		due, err := tx.EarliestDue(ctx, now, account)
		if err != nil || due == nil {
			return got, due == nil, false, err
		}
		res, err := tx.ChargeDue(ctx, store.ChargeStep{Upto: now, Now: now, Account: account, Limit: limit - got.Hours})
		if err != nil {
			return got, false, false, err
		}
		if res.Accounts == 0 {
			return got, false, false, fmt.Errorf("an hour at %s is due but no account was metered", due.Format(time.RFC3339))
		}
		for _, id := range res.Overdrawn {
			if err := s.suspendForCredit(ctx, tx, id); err != nil {
				return got, false, false, err
			}
		}
		if err := s.creditLow(ctx, tx, res.CreditLow, res.CreditMail); err != nil {
			return got, false, false, err
		}
		got.Hours += res.Hours
		got.Total += res.Total
		got.Overdrawn += len(res.Overdrawn)
	}
	return got, false, false, nil
}

// ---- what the account holder sees ----

// Account reads the principal's account as it stands now (its credit, budget and
// language may have changed since the principal was made).
func (s *Service) Account(ctx context.Context, p hosting.Principal) (hosting.Account, error) {
	acct, err := s.store.Account(ctx, p.Account.ID)
	return acct, internal("account", err)
}

// Billing returns the principal's billing figures.
func (s *Service) Billing(ctx context.Context, p hosting.Principal) (billing.Summary, error) {
	now := s.NowFor(p.Account.ID)
	acct, err := s.store.Account(ctx, p.Account.ID)
	if err != nil {
		return billing.Summary{}, internal("account", err)
	}
	meters, err := s.store.Meters(ctx, acct.ID)
	if err != nil {
		return billing.Summary{}, internal("meters", err)
	}
	chargedTo, err := s.store.ChargedTo(ctx, acct.ID)
	if err != nil {
		return billing.Summary{}, internal("meters", err)
	}
	spent, err := s.store.Spent(ctx, acct.ID, billing.MonthStart(now))
	if err != nil {
		return billing.Summary{}, internal("spent", err)
	}
	licenses, err := s.store.LicensesMonthly(ctx, acct.ID)
	if err != nil {
		return billing.Summary{}, internal("licenses", err)
	}
	return billing.Summarize(acct, meters, chargedTo, spent, licenses, now), nil
}

// TransactionsPageSize is how many ledger entries a page holds (docs/api.md, Rate limits).
const TransactionsPageSize = 50

// Transactions returns page (from 1) of the principal's ledger, newest first, and
// how many entries there are in all.
func (s *Service) Transactions(ctx context.Context, p hosting.Principal, page int) ([]hosting.Transaction, int, error) {
	list, total, err := s.store.Transactions(ctx, p.Account.ID, TransactionsPageSize, pageOffset(page, TransactionsPageSize))
	return list, total, internal("transactions", err)
}

// SetBudget sets an account's monthly budget (nil clears it); an operator's command
// now, the console's later.
func (s *Service) SetBudget(ctx context.Context, accountID int64, budget *hosting.Money) (hosting.Account, error) {
	if budget != nil && *budget <= 0 {
		return hosting.Account{}, errors.New("the budget must be positive")
	}
	var a hosting.Account
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		if err := tx.SetBudget(ctx, accountID, budget); errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no account %d", accountID)
		} else if err != nil {
			return err
		}
		var err error
		if a, err = tx.Account(ctx, accountID); err != nil {
			return err
		}
		return s.emitAccount(ctx, tx, hosting.EventAccountUpdated, accountID, hosting.AccountEventData{Changes: []string{"budget"}})
	})
	return a, err
}
