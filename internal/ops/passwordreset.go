package ops

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"

	"golang.org/x/crypto/bcrypt"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/mail"
	"github.com/berthhq/berth/internal/store"
)

// Password reset from the console's sign-in page (issue 31; docs/operating.md,
// Mail): an email asked for gets a link <--public-url>/password-reset/<token>; the
// token is 32 random bytes, kept only as its SHA-256 hash, bound to the account,
// good once and for hosting.PasswordResetTTL. Setting a password with it ends every
// console session of the account. The web console throttles the requests as it
// throttles sign-ins.

// ErrPasswordResetInvalid answers a reset token that is unknown, used or expired:
// the same for the three, so that a link says no more than that it does not work.
var ErrPasswordResetInvalid = hosting.Errorf(hosting.CodeNotFound, "console.password_reset_invalid")

// PasswordResetPath is the console's path of a reset link, before its token.
const PasswordResetPath = "/password-reset/"

// RequestPasswordReset mails the holder of the account of email a link to set a new
// password. It answers nil whether or not an account has that email, and does the
// same work either way (a token made and hashed, a transaction that prunes expired
// resets, a mail rendered) except the writes: an unknown email gets no reset and no
// mail, and the asker cannot tell the difference, not even by the time it takes.
func (s *Service) RequestPasswordReset(ctx context.Context, email string) error {
	email = strings.TrimSpace(email)
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	token := base64.RawURLEncoding.EncodeToString(b)
	now := s.Now()
	a, err := s.store.AccountByEmail(ctx, email)
	known := err == nil
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return internal("account", err)
	}
	d := mail.PasswordReset{Email: email, Link: s.link(PasswordResetPath + token), ValidMinutes: int(hosting.PasswordResetTTL.Minutes())}
	return s.store.InTx(ctx, func(tx store.Tx) error {
		if err := tx.DeletePasswordResets(ctx, now.Add(-hosting.PasswordResetTTL)); err != nil {
			return internal("prune password resets", err)
		}
		if !known {
			_, err := mail.Render("en", d) // the work a known email's mail takes
			return internal("render", err)
		}
		if _, err := tx.CreatePasswordReset(ctx, hosting.PasswordReset{AccountID: a.ID, Hash: HashToken(token), CreatedAt: now,
			ExpiresAt: now.Add(hosting.PasswordResetTTL)}); err != nil {
			return internal("password reset", err)
		}
		d.Email = a.Email
		_, err := s.mailAccount(ctx, tx, a.ID, d, mail.Thread{})
		return err
	})
}

// PasswordResetAccount is the account a reset token would set the password of:
// ErrPasswordResetInvalid when the token is unknown, used or expired.
func (s *Service) PasswordResetAccount(ctx context.Context, token string) (hosting.Account, error) {
	r, err := s.store.PasswordReset(ctx, HashToken(token))
	if errors.Is(err, store.ErrNotFound) || (err == nil && (r.UsedAt != nil || !s.Now().Before(r.ExpiresAt))) {
		return hosting.Account{}, ErrPasswordResetInvalid
	}
	if err != nil {
		return hosting.Account{}, internal("password reset", err)
	}
	a, err := s.store.Account(ctx, r.AccountID)
	return a, notFoundOr("account", err)
}

// ResetPassword sets the password of the token's account: next must pass
// hosting.CheckPassword (new_password) and again repeat it (new_password_again,
// validation.password_mismatch), else nothing changes and the token stays good.
// ErrPasswordResetInvalid when the token is unknown, used or expired (also when
// another request spent it meanwhile). The token is spent, with the account's other
// open resets; every console session of the account ends; an account.updated event
// names "password".
func (s *Service) ResetPassword(ctx context.Context, token, next, again string) error {
	a, err := s.PasswordResetAccount(ctx, token)
	if err != nil {
		return err
	}
	var v hosting.Validation
	hosting.CheckPassword(&v, "new_password", next)
	if again != next {
		v.Add("new_password_again", "validation.password_mismatch")
	}
	if err := v.Err("new_password", "new_password_again"); err != nil {
		return err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(next), PasswordCost)
	if err != nil {
		return internal("hash password", err)
	}
	return s.store.InTx(ctx, func(tx store.Tx) error {
		r, spent, err := tx.SpendPasswordReset(ctx, HashToken(token), s.Now())
		if errors.Is(err, store.ErrNotFound) || (err == nil && (!spent || r.AccountID != a.ID)) {
			return ErrPasswordResetInvalid
		}
		if err != nil {
			return internal("spend password reset", err)
		}
		if err := tx.SetAccountPassword(ctx, a.ID, string(hash)); err != nil {
			return notFoundOr("set password", err)
		}
		if err := tx.DeleteSessionsOf(ctx, a.ID, nil); err != nil {
			return internal("end sessions", err)
		}
		return s.emitAccount(ctx, tx, hosting.EventAccountUpdated, a.ID, hosting.AccountEventData{Changes: []string{"password"}})
	})
}
