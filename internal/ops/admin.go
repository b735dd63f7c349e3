package ops

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// The operator's use cases, behind `berthd admin`. Their errors are plain: an
// operator reads them in a terminal.

// NewAccount is what `admin account create` asks for.
type NewAccount struct {
	Email, Password, Name, Language string
	Credit                          hosting.Money
	// Quotas sets the account's quotas by the kinds' Flag; those not in it are
	// hosting.DefaultQuotas.
	Quotas map[string]int
}

// CreateAccount creates an account, writing its opening credit as a top-up so that
// credit is always the sum of the ledger.
func (s *Service) CreateAccount(ctx context.Context, n NewAccount) (hosting.Account, error) {
	email := strings.TrimSpace(n.Email)
	if addr, err := mail.ParseAddress(email); err != nil || addr.Address != email {
		return hosting.Account{}, fmt.Errorf("invalid email %q", n.Email)
	}
	var pv hosting.Validation
	if hosting.CheckPassword(&pv, "password", n.Password); !pv.Empty() {
		return hosting.Account{}, fmt.Errorf("the password must have %d to %d bytes", hosting.PasswordMinLen, hosting.PasswordMaxLen)
	}
	lang := n.Language
	if lang == "" {
		lang = "en"
	}
	if !isLanguage(lang) {
		return hosting.Account{}, fmt.Errorf("unsupported language %q (want one of %s)", lang, strings.Join(hosting.Languages, ", "))
	}
	if err := checkQuotas(n.Quotas); err != nil {
		return hosting.Account{}, err
	}
	quotas := hosting.DefaultQuotas
	setQuotas(&quotas, n.Quotas)
	if n.Credit < 0 {
		return hosting.Account{}, errors.New("the opening credit cannot be negative")
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(n.Password), PasswordCost)
	if err != nil {
		return hosting.Account{}, err
	}
	name := n.Name
	if name == "" {
		name = email
	}
	a := hosting.Account{Email: email, Name: name, PasswordHash: string(hash), Language: lang, Currency: "EUR",
		Quotas: quotas, CreatedAt: s.Now()}
	err = s.store.InTx(ctx, func(tx store.Tx) error {
		id, err := tx.CreateAccount(ctx, a)
		if errors.Is(err, store.ErrConflict) {
			return fmt.Errorf("an account with email %s exists already", email)
		}
		if err != nil {
			return err
		}
		a.ID = id
		if n.Credit > 0 {
			t, err := tx.AddTransaction(ctx, hosting.Transaction{AccountID: id, Type: hosting.TxTopup, Amount: n.Credit,
				CreatedAt: s.Now()})
			if err != nil {
				return err
			}
			a.Credit = t.BalanceAfter
			return s.toppedUp(ctx, tx, t)
		}
		return nil
	})
	return a, err
}

func isLanguage(l string) bool {
	for _, x := range hosting.Languages {
		if x == l {
			return true
		}
	}
	return false
}

// SetAccountBlocked blocks or unblocks an account.
func (s *Service) SetAccountBlocked(ctx context.Context, id int64, blocked bool) (hosting.Account, error) {
	var a hosting.Account
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		if err := tx.SetAccountBlocked(ctx, id, blocked); errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no account %d", id)
		} else if err != nil {
			return err
		}
		var err error
		a, err = tx.Account(ctx, id)
		return err
	})
	return a, err
}

// Accounts lists up to limit accounts, blocked or not, by id, from the one after the
// id after (0: the first): an operator's list reads a page, never every account.
func (s *Service) Accounts(ctx context.Context, after int64, limit int) ([]hosting.Account, error) {
	return s.store.Accounts(ctx, after, limit)
}

// Tokens lists an account's tokens, the revoked ones too, newest first. An unknown
// account is an error naming it.
func (s *Service) Tokens(ctx context.Context, accountID int64) ([]hosting.Token, error) {
	if _, err := s.store.Account(ctx, accountID); errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("no account %d", accountID)
	} else if err != nil {
		return nil, err
	}
	return s.store.Tokens(ctx, accountID)
}

// CreateToken issues an API token; the secret is returned once and stored only hashed.
func (s *Service) CreateToken(ctx context.Context, accountID int64, name, scopes string, expiresIn time.Duration) (hosting.Token, string, error) {
	name, sc, err := checkToken(name, scopes)
	if err != nil {
		return hosting.Token{}, "", err
	}
	if expiresIn < 0 {
		return hosting.Token{}, "", errors.New("the expiry must lie in the future")
	}
	secret, hash := NewTokenSecret()
	t := hosting.Token{AccountID: accountID, Name: name, Hash: hash, Scopes: sc, CreatedAt: s.Now()}
	if expiresIn > 0 {
		exp := s.Now().Add(expiresIn).Truncate(time.Millisecond)
		t.ExpiresAt = &exp
	}
	t, err = s.addToken(ctx, t)
	return t, secret, err
}

// checkToken checks a new token's name and scopes, and returns them as stored.
func checkToken(name, scopes string) (string, hosting.Scopes, error) {
	sc, bad := hosting.ParseScopes(scopes)
	if len(bad) > 0 {
		return "", nil, fmt.Errorf("unknown scopes: %s", strings.Join(bad, ", "))
	}
	name = strings.TrimSpace(name)
	if name == "" || len(name) > hosting.NameMaxLen {
		return "", nil, errors.New("a token needs a name of 1 to 64 characters")
	}
	return name, sc, nil
}

// addToken stores a token of an account that has room for one more (its quota).
func (s *Service) addToken(ctx context.Context, t hosting.Token) (hosting.Token, error) {
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		if _, err := tx.Account(ctx, t.AccountID); errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no account %d", t.AccountID)
		} else if err != nil {
			return err
		}
		if err := s.quotaLeft(ctx, tx, t.AccountID, hosting.QuotaTokens); err != nil {
			return err
		}
		id, err := tx.CreateToken(ctx, t)
		t.ID = id
		return err
	})
	return t, err
}

// RevokeToken revokes a token at once; revoking twice keeps the first time.
func (s *Service) RevokeToken(ctx context.Context, id int64) (hosting.Token, error) {
	var t hosting.Token
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		if err := tx.RevokeToken(ctx, id, s.Now()); errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no token %d", id)
		} else if err != nil {
			return err
		}
		var err error
		t, err = tx.Token(ctx, id)
		return err
	})
	return t, err
}

// AddCredit tops an account up; description is shown in the transaction history
// (empty: "Top-up" in the account's language). A top-up that brings the credit above
// zero lifts a suspension for exhausted credit.
func (s *Service) AddCredit(ctx context.Context, accountID int64, amount hosting.Money, description string) (hosting.Transaction, error) {
	if amount <= 0 {
		return hosting.Transaction{}, errors.New("the amount must be positive")
	}
	var t hosting.Transaction
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		if err := creditRoom(ctx, tx, accountID, amount); err != nil {
			return err
		}
		var err error
		t, err = tx.AddTransaction(ctx, hosting.Transaction{AccountID: accountID, Type: hosting.TxTopup, Amount: amount,
			Description: description, CreatedAt: s.NowFor(accountID)})
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no account %d", accountID)
		}
		if err != nil {
			return err
		}
		if err := s.toppedUp(ctx, tx, t); err != nil {
			return err
		}
		return s.afterCredit(ctx, tx, t)
	})
	return t, err
}

// AdjustCredit writes an operator's correction to an account's credit: an
// adjustment transaction of amount (signed, not zero) with description, which must
// say why (the account holder reads it in the history). One that brings the credit
// above zero lifts a suspension for credit, as a top-up does; one that takes it below
// zero suspends the account's servers, as a charge would.
func (s *Service) AdjustCredit(ctx context.Context, accountID int64, amount hosting.Money, description string) (hosting.Transaction, error) {
	switch description = strings.TrimSpace(description); {
	case amount == 0:
		return hosting.Transaction{}, errors.New("the amount must not be zero")
	case description == "":
		return hosting.Transaction{}, errors.New("an adjustment needs a description: the account holder reads it in the history")
	case utf8.RuneCountInString(description) > maxAdjustmentDescription:
		return hosting.Transaction{}, fmt.Errorf("the description is longer than %d characters", maxAdjustmentDescription)
	}
	var t hosting.Transaction
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		if err := creditRoom(ctx, tx, accountID, amount); err != nil {
			return err
		}
		var err error
		t, err = tx.AddTransaction(ctx, hosting.Transaction{AccountID: accountID, Type: hosting.TxAdjustment, Amount: amount,
			Description: description, CreatedAt: s.NowFor(accountID)})
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no account %d", accountID)
		}
		if err != nil {
			return err
		}
		if err := s.emitAccount(ctx, tx, hosting.EventBillingAdjusted, accountID,
			hosting.BillingEventData{Credit: t.BalanceAfter.String(), Amount: t.Amount.String()}); err != nil {
			return err
		}
		if t.BalanceAfter < 0 {
			return s.suspendForCredit(ctx, tx, accountID)
		}
		return s.afterCredit(ctx, tx, t)
	})
	return t, err
}

// maxCredit bounds an account's credit either way (about 461 billion in the
// currency): an operator's top-up or adjustment past it is refused, where the sum
// would have overflowed the store's 64 bits (SQLite turns such a sum into a float).
const maxCredit = hosting.Money(1 << 62)

// creditRoom refuses amount when it would take the account's credit past maxCredit.
func creditRoom(ctx context.Context, tx store.Tx, accountID int64, amount hosting.Money) error {
	a, err := tx.Account(ctx, accountID)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no account %d", accountID)
	} else if err != nil {
		return err
	}
	if amount > maxCredit || amount < -maxCredit || a.Credit+amount > maxCredit || a.Credit+amount < -maxCredit {
		return fmt.Errorf("the credit %s with %s would be past %s either way, more than an account may hold", a.Credit, amount, maxCredit)
	}
	return nil
}

// maxAdjustmentDescription bounds an adjustment's description, in characters.
const maxAdjustmentDescription = 200

// SetServerSuspended suspends or unsuspends a server. Suspension shows at once; the
// machine is powered off in the background (after the operation in progress, if any).
// Unsuspending leaves the machine off: its owner powers it on.
func (s *Service) SetServerSuspended(ctx context.Context, id int64, suspended bool) (hosting.Server, error) {
	var srv hosting.Server
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		err := s.suspensionHooks(ctx, tx, 0, id, func() error { return tx.SetServerSuspended(ctx, id, suspended) })
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no server %d", id)
		} else if err != nil {
			return err
		}
		if suspended {
			if err := s.followSuspension(ctx, tx, id); err != nil {
				return err
			}
		}
		srv, err = tx.ServerAny(ctx, id)
		return err
	})
	return srv, err
}

// ApplyCatalog replaces the catalog. Items no longer listed stop being sold; servers
// that use them are untouched.
func (s *Service) ApplyCatalog(ctx context.Context, c hosting.Catalog) error {
	if problems := c.Check(); len(problems) > 0 {
		return fmt.Errorf("catalog: %s", strings.Join(problems, "; "))
	}
	return s.store.InTx(ctx, func(tx store.Tx) error { return tx.ApplyCatalog(ctx, c) })
}

// EnsureCatalog loads c when the store has no catalog yet (first start).
func (s *Service) EnsureCatalog(ctx context.Context, c hosting.Catalog) error {
	ls, err := s.store.Locations(ctx)
	if err != nil || len(ls) > 0 {
		return err
	}
	return s.ApplyCatalog(ctx, c)
}
