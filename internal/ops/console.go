package ops

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// The console's use cases (issue 7): signing in and out, the account's own settings
// (language, budget) and its API tokens. Everything else the console does goes through
// the same methods as the API.

// SessionPrefix starts every console session secret (the cookie's value).
const SessionPrefix = "berths_"

// DefaultSessionTTL is how long a console sign-in lasts.
const DefaultSessionTTL = 12 * time.Hour

// ConsoleToken is the token a console session acts with: every scope, as the
// account holder may do everything their tokens may.
func ConsoleToken(accountID int64) hosting.Token {
	return hosting.Token{AccountID: accountID, Name: "console", Scopes: hosting.AllScopes}
}

// PasswordCost is the bcrypt cost account passwords are hashed with. Tests lower it:
// under the race detector one bcrypt at the default cost takes seconds.
var PasswordCost = bcrypt.DefaultCost

var (
	dummyOnce sync.Once
	dummyHash []byte
)

// dummyPasswordHash is compared against when an email is unknown, so that a sign-in
// takes as long whether or not the account exists.
func dummyPasswordHash() []byte {
	dummyOnce.Do(func() {
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		dummyHash, _ = bcrypt.GenerateFromPassword(b, PasswordCost)
	})
	return dummyHash
}

// SignIn checks an email and password and opens a console session lasting ttl
// (DefaultSessionTTL when 0). The secret is returned once and stored only hashed.
// A wrong email or password is CodeUnauthenticated, the same for both.
func (s *Service) SignIn(ctx context.Context, email, password string, ttl time.Duration) (hosting.Session, hosting.Account, string, error) {
	if ttl <= 0 {
		ttl = DefaultSessionTTL
	}
	fail := hosting.Errorf(hosting.CodeUnauthenticated, "console.signin_failed")
	a, err := s.store.AccountByEmail(ctx, strings.TrimSpace(email))
	if errors.Is(err, store.ErrNotFound) {
		_ = bcrypt.CompareHashAndPassword(dummyPasswordHash(), []byte(password))
		return hosting.Session{}, a, "", fail
	}
	if err != nil {
		return hosting.Session{}, a, "", internal("account", err)
	}
	if bcrypt.CompareHashAndPassword([]byte(a.PasswordHash), []byte(password)) != nil {
		return hosting.Session{}, hosting.Account{}, "", fail
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	secret := SessionPrefix + base64.RawURLEncoding.EncodeToString(b)
	now := s.Now()
	sess := hosting.Session{AccountID: a.ID, Hash: HashToken(secret), CreatedAt: now, ExpiresAt: now.Add(ttl)}
	err = s.store.InTx(ctx, func(tx store.Tx) error {
		if err := tx.DeleteExpiredSessions(ctx, now); err != nil {
			return err
		}
		var err error
		sess.ID, err = tx.CreateSession(ctx, sess)
		return err
	})
	if err != nil {
		return hosting.Session{}, hosting.Account{}, "", internal("create session", err)
	}
	return sess, a, secret, nil
}

// SessionPrincipal resolves a console session secret to the account holder acting
// through it (with ConsoleToken). A missing, unknown, signed-out or expired session
// is CodeUnauthenticated.
func (s *Service) SessionPrincipal(ctx context.Context, secret string) (hosting.Principal, hosting.Session, error) {
	unauth := hosting.Errorf(hosting.CodeUnauthenticated, "console.signin_required")
	if !strings.HasPrefix(secret, SessionPrefix) || len(secret) > 200 {
		return hosting.Principal{}, hosting.Session{}, unauth
	}
	sess, a, err := s.store.SessionByHash(ctx, HashToken(secret))
	if errors.Is(err, store.ErrNotFound) {
		return hosting.Principal{}, sess, unauth
	}
	if err != nil {
		return hosting.Principal{}, sess, internal("session", err)
	}
	if !sess.Usable(s.Now()) {
		return hosting.Principal{}, sess, unauth
	}
	return hosting.Principal{Account: a, Token: ConsoleToken(a.ID)}, sess, nil
}

// SignOut ends a console session; ending one that does not exist is no error.
func (s *Service) SignOut(ctx context.Context, secret string) error {
	return s.store.InTx(ctx, func(tx store.Tx) error {
		return internal("sign out", tx.DeleteSession(ctx, HashToken(secret)))
	})
}

// ChangePassword replaces the account holder's console password. current must be the
// one it has (else validation.password_wrong on current_password), next pass
// hosting.CheckPassword (new_password) and again repeat it (new_password_again,
// validation.password_mismatch); every field's error is answered at once and then
// nothing changes. Every other console session of the account ends: only keep, the
// secret of the session asking, stays signed in. An account.updated event names
// "password" (never the password).
func (s *Service) ChangePassword(ctx context.Context, p hosting.Principal, keep, current, next, again string) error {
	a, err := s.store.Account(ctx, p.Account.ID)
	if err != nil {
		return notFoundOr("account", err)
	}
	var v hosting.Validation
	switch {
	case current == "":
		v.Add("current_password", "validation.required")
	case bcrypt.CompareHashAndPassword([]byte(a.PasswordHash), []byte(current)) != nil:
		v.Add("current_password", "validation.password_wrong")
	}
	hosting.CheckPassword(&v, "new_password", next)
	if again != next {
		v.Add("new_password_again", "validation.password_mismatch")
	}
	if err := v.Err("current_password", "new_password", "new_password_again"); err != nil {
		return err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(next), PasswordCost)
	if err != nil {
		return internal("hash password", err)
	}
	var kept []byte
	if keep != "" {
		kept = HashToken(keep)
	}
	return s.store.InTx(ctx, func(tx store.Tx) error {
		if err := tx.SetAccountPassword(ctx, a.ID, string(hash)); err != nil {
			return notFoundOr("set password", err)
		}
		if err := tx.DeleteSessionsOf(ctx, a.ID, kept); err != nil {
			return internal("end sessions", err)
		}
		return s.emitAccount(ctx, tx, hosting.EventAccountUpdated, a.ID, hosting.AccountEventData{Changes: []string{"password"}})
	})
}

// SetLanguage sets the language the account reads the console and the API's messages
// in: one of hosting.Languages, else a validation error on language.
func (s *Service) SetLanguage(ctx context.Context, p hosting.Principal, lang string) (hosting.Account, error) {
	if !isLanguage(lang) {
		return hosting.Account{}, hosting.Invalid("language", "validation.one_of", "values", strings.Join(hosting.Languages, ", "))
	}
	var a hosting.Account
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		if err := tx.SetAccountLanguage(ctx, p.Account.ID, lang); err != nil {
			return notFoundOr("set language", err)
		}
		var err error
		if a, err = tx.Account(ctx, p.Account.ID); err != nil || p.Account.Language == lang {
			return internal("account", err)
		}
		return s.emitAccount(ctx, tx, hosting.EventAccountUpdated, a.ID, hosting.AccountEventData{Changes: []string{"language"}})
	})
	return a, err
}

// UpdateBudget sets the principal's monthly budget (nil clears it); a budget must be
// positive (a validation error on budget otherwise).
func (s *Service) UpdateBudget(ctx context.Context, p hosting.Principal, budget *hosting.Money) (hosting.Account, error) {
	if budget != nil && *budget <= 0 {
		return hosting.Account{}, hosting.Invalid("budget", "console.budget_positive")
	}
	a, err := s.SetBudget(ctx, p.Account.ID, budget)
	return a, internal("set budget", err)
}

// AccountTokens lists the principal's API tokens that are not revoked, newest first.
func (s *Service) AccountTokens(ctx context.Context, p hosting.Principal) ([]hosting.Token, error) {
	ts, err := s.store.AccountTokens(ctx, p.Account.ID)
	return ts, internal("tokens", err)
}

// CreateAccountToken issues an API token of the principal's account: name 1–64,
// scopes from the list of docs/api.md, Tokens and scopes (read is always added), expiresIn 0 for never. The secret
// is returned once. Failures are validation errors on name, scopes or expires_in.
func (s *Service) CreateAccountToken(ctx context.Context, p hosting.Principal, name string, scopes []string, expiresIn time.Duration) (hosting.Token, string, error) {
	var v hosting.Validation
	hosting.CheckLabel(&v, "name", name)
	for _, sc := range scopes {
		if !slices.Contains(hosting.AllScopes, hosting.Scope(sc)) {
			v.Add("scopes", "validation.one_of", "values", hosting.Scopes(hosting.AllScopes).String())
			break
		}
	}
	if expiresIn < 0 {
		v.Add("expires_in", "console.expiry_future")
	}
	if err := v.Err("name", "scopes", "expires_in"); err != nil {
		return hosting.Token{}, "", err
	}
	t, secret, err := s.CreateToken(ctx, p.Account.ID, name, strings.Join(scopes, ","), expiresIn)
	return t, secret, internal("create token", err)
}

// RevokeAccountToken revokes one of the principal's tokens at once; another
// account's token, or one revoked already, is CodeNotFound.
func (s *Service) RevokeAccountToken(ctx context.Context, p hosting.Principal, id int64) error {
	return s.store.InTx(ctx, func(tx store.Tx) error {
		t, err := tx.Token(ctx, id)
		if err != nil {
			return notFoundOr("token", err)
		}
		if t.AccountID != p.Account.ID || t.RevokedAt != nil {
			return hosting.ErrNotFound()
		}
		return internal("revoke token", tx.RevokeToken(ctx, id, s.Now()))
	})
}

// DailySpend is what the principal's account spent on each of the last days UTC days
// (today last), charges net of refunds by the hour they paid for; days without any
// show zero.
func (s *Service) DailySpend(ctx context.Context, p hosting.Principal, days int) ([]hosting.DaySpend, error) {
	if days <= 0 {
		return nil, nil
	}
	now := s.NowFor(p.Account.ID).UTC()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	from := today.AddDate(0, 0, -(days - 1))
	got, err := s.store.DailySpend(ctx, p.Account.ID, from)
	if err != nil {
		return nil, internal("daily spend", err)
	}
	byDay := make(map[int64]hosting.Money, len(got))
	for _, d := range got {
		byDay[d.Day.Unix()] += d.Spent
	}
	out := make([]hosting.DaySpend, days)
	for i := range out {
		day := from.AddDate(0, 0, i)
		out[i] = hosting.DaySpend{Day: day, Spent: byDay[day.Unix()]}
	}
	return out, nil
}
