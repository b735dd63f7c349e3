package ops

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// checkQuota adds kind's error to v when the account holds as many of kind as its
// quota allows, so that it may not make one more. It locks the account first: the
// count and the write that follows in tx are one step, and parallel requests cannot
// take an account past its quota together.
func (s *Service) checkQuota(ctx context.Context, tx store.Tx, accountID int64, kind hosting.QuotaKind, v *hosting.Validation) error {
	acct, err := tx.LockAccount(ctx, accountID)
	if err != nil {
		return notFoundOr("account", err)
	}
	use, err := tx.Usage(ctx, accountID, s.NowFor(accountID))
	if err != nil {
		return internal("usage", err)
	}
	if quota := *kind.Of(&acct.Quotas); *kind.Of(&use) >= quota {
		v.Add(kind.Field, kind.Message, "quota", quota)
	}
	return nil
}

// quotaLeft is checkQuota for a write that has nothing else to validate.
func (s *Service) quotaLeft(ctx context.Context, tx store.Tx, accountID int64, kind hosting.QuotaKind) error {
	var v hosting.Validation
	if err := s.checkQuota(ctx, tx, accountID, kind, &v); err != nil {
		return err
	}
	return v.Err()
}

// SetQuotas is `admin account update`: it sets the quotas in set, by the kinds'
// Flag; the others stay as they are. A quota below what the account holds is
// allowed: nothing is taken away, and the account may make no more until it holds
// less.
func (s *Service) SetQuotas(ctx context.Context, id int64, set map[string]int) (hosting.Account, error) {
	if err := checkQuotas(set); err != nil {
		return hosting.Account{}, err
	}
	var a hosting.Account
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		if a, err = tx.LockAccount(ctx, id); errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no account %d", id)
		} else if err != nil {
			return err
		}
		setQuotas(&a.Quotas, set)
		return tx.SetQuotas(ctx, id, a.Quotas)
	})
	return a, err
}

// Usage counts what the principal's account holds against its quotas.
func (s *Service) Usage(ctx context.Context, p hosting.Principal) (hosting.Quotas, error) {
	u, err := s.store.Usage(ctx, p.Account.ID, s.NowFor(p.Account.ID))
	return u, internal("usage", err)
}

// checkQuotas checks quotas set by the kinds' Flag.
func checkQuotas(set map[string]int) error {
	for flag, n := range set {
		if !slices.ContainsFunc(hosting.QuotaKinds, func(k hosting.QuotaKind) bool { return k.Flag == flag }) {
			return fmt.Errorf("no quota %q", flag)
		}
		if n < 0 {
			return fmt.Errorf("the %s quota cannot be negative", flag)
		}
	}
	return nil
}

// setQuotas sets the quotas in set, by the kinds' Flag, in q.
func setQuotas(q *hosting.Quotas, set map[string]int) {
	for _, k := range hosting.QuotaKinds {
		if n, ok := set[k.Flag]; ok {
			*k.Of(q) = n
		}
	}
}
