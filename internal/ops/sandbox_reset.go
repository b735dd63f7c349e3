package ops

import (
	"context"
	"errors"
	"regexp"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// SandboxCreditField is the field of a sandbox reset's credit (and its error's key).
const SandboxCreditField = "credit"

// sandboxCredit is what a credit given to the sandbox looks like: an amount of at
// least 0, as the API writes money or shorter ("100", "99.5", "12.5000"), small
// enough for hosting.ParseMoney to read exactly (its limit is above 4·10^14).
var sandboxCredit = regexp.MustCompile(`^[0-9]{1,14}(\.[0-9]{1,4})?$`)

// ParseSandboxCredit reads a credit given to the sandbox (a reset's, a fixed
// account's): a validation error on field when it is not an amount of at least 0
// with at most 4 decimals.
func ParseSandboxCredit(field, s string) (hosting.Money, error) {
	if !sandboxCredit.MatchString(s) {
		return 0, hosting.Invalid(field, "validation.sandbox_credit")
	}
	m, err := hosting.ParseMoney(s)
	if err != nil {
		return 0, hosting.Invalid(field, "validation.sandbox_credit")
	}
	return m, nil
}

// ResetAccount empties the principal's account, as POST /sandbox/v1/reset does
// (docs/api.md, The sandbox), in one transaction: its servers are deleted at once, without
// operations, and their machines removed at once; its snapshots, SSH keys, projects,
// recipes, operations (and their jobs), ledger, meters, idempotency records, support
// tickets (with their messages and files, and the files it uploaded) and its
// servers' metrics are gone, and its test clock is back on the system clock. Then the
// account is topped up with credit (nil: with its first top-up, its opening credit;
// nothing when that is 0), so that its credit is again the sum of its ledger. Its
// tokens, email, password, language, quotas and blocked flag stay, and so does the
// audit log (the operator's). It returns the account as it is then. A credit that is
// no amount of at least 0 is a validation error on credit.
//
// The faults the sandbox keeps in memory are the caller's to clear.
func (s *Service) ResetAccount(ctx context.Context, p hosting.Principal, credit *string) (hosting.Account, error) {
	var give *hosting.Money
	if credit != nil {
		m, err := ParseSandboxCredit(SandboxCreditField, *credit)
		if err != nil {
			return hosting.Account{}, err
		}
		give = &m
	}
	if s.instant == nil {
		return hosting.Account{}, internal("reset", errNoInstantMachines)
	}
	id := p.Account.ID
	// Not in the middle of an advance of the account's clock: it would set the
	// clock's copy in memory after the reset cleared it.
	unlock, err := s.lockClock(ctx, id)
	if err != nil {
		return hosting.Account{}, err
	}
	defer unlock()
	var acct hosting.Account
	var removed int
	err = s.store.InTx(ctx, func(tx store.Tx) error {
		if err := s.publishResetDNS(ctx, tx, id); err != nil {
			return err
		}
		r, err := tx.ResetAccount(ctx, id, s.Now())
		if errors.Is(err, store.ErrNotFound) {
			return hosting.ErrNotFound()
		}
		if err != nil {
			return internal("reset account", err)
		}
		if err := s.instant.RemoveTx(ctx, tx.SQL(), r.Machines); err != nil {
			return internal("remove machines", err)
		}
		if err := s.instant.RemoveVolumesTx(ctx, tx.SQL(), r.Volumes); err != nil {
			return internal("remove volumes", err)
		}
		removed = len(r.Machines)
		if err := s.resetClock(ctx, tx, id); err != nil {
			return err
		}
		if give == nil {
			give = &r.OpeningCredit
		}
		if *give > 0 {
			t, err := tx.AddTransaction(ctx, hosting.Transaction{AccountID: id, Type: hosting.TxTopup, Amount: *give,
				CreatedAt: s.Now()})
			if err != nil {
				return internal("top-up", err)
			}
			if err := s.toppedUp(ctx, tx, t); err != nil {
				return err
			}
		}
		acct, err = tx.Account(ctx, id)
		return internal("account", err)
	})
	if err != nil {
		return hosting.Account{}, err
	}
	s.log.Info("sandbox account reset", "account", id, "machines_removed", removed, "credit", acct.Credit.String())
	return acct, nil
}
