package webui

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/ratelimit"
)

// Password reset (issue 31; docs/operating.md, Mail), for visitors who are not signed
// in: "Forgot your password?" on the sign-in page leads to /password-reset, which asks
// for an email and answers the same whether or not it is an account's; the mailed
// link, /password-reset/{token}, asks for the new password. Both forms carry the
// sign-in form's CSRF (the pre-session cookie, double submit), and both are under the
// sign-in throttle: a request counts as a failed sign-in of its email and of its
// client address, and a link that does not work counts against the address.

func (c *Console) passwordResetRoutes() {
	c.mux.Handle("GET /password-reset", c.public(c.passwordResetPage))
	c.mux.Handle("POST /password-reset", c.public(c.requestPasswordReset))
	c.mux.Handle("GET /password-reset/{token}", c.public(c.setPasswordPage))
	c.mux.Handle("POST /password-reset/{token}", c.public(c.setPassword))
}

// preSecret is the browser's pre-session secret, made and set when it has none.
func preSecret(r *req) string {
	pre := ""
	if ck, err := r.Cookie(preCookie); err == nil && len(ck.Value) >= 32 && len(ck.Value) <= 64 {
		pre = ck.Value
	} else {
		pre = randomString()
	}
	setCookie(r.w, r.Request, preCookie, pre, 3600)
	return pre
}

// publicForm parses a form of a visitor (at most 16 KiB) and checks its CSRF; false
// when it is not to be acted on (the page was answered).
func publicForm(r *req) (bool, error) {
	r.Body = http.MaxBytesReader(r.w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		return false, hosting.Invalid("body", "validation.body_too_large", "max", 16<<10)
	}
	pre, err := r.Cookie(preCookie)
	return err == nil && pre.Value != "" && hmac.Equal([]byte(pre.Value), []byte(r.PostFormValue("csrf"))), nil
}

func (c *Console) showPasswordReset(r *req, status int, email string, sent bool, msgs []string) error {
	c.render(r, status, "passwordreset", "console.password_reset_title", "", map[string]any{
		"Pre": preSecret(r), "Email": email, "Sent": sent, "Errors": msgs})
	return nil
}

func (c *Console) passwordResetPage(r *req) error {
	return c.showPasswordReset(r, http.StatusOK, "", false, nil)
}

// throttled checks the sign-in throttle's counters l (Peek) and, when one holds,
// answers its message and Retry-After; "" when none does.
func (c *Console) throttled(r *req, now time.Time, l ...limit) (string, error) {
	for _, l := range l {
		res, err := l.lim.Peek(r.ctx(), l.key, now)
		if err != nil {
			return "", err
		}
		if !res.Allowed {
			if t := c.cfg.Telemetry; t != nil {
				t.RateLimited("console", l.by)
			}
			mins := int((res.RetryAfter + time.Minute - 1) / time.Minute)
			r.w.Header().Set("Retry-After", itoa(int64(res.RetryAfter.Seconds()+1)))
			return r.T("console.signin_throttled", "minutes", mins), nil
		}
	}
	return "", nil
}

// count counts an attempt against the throttle's counters l.
func count(r *req, now time.Time, l ...limit) error {
	for _, l := range l {
		if _, err := l.lim.Allow(r.ctx(), l.key, now); err != nil {
			return err
		}
	}
	return nil
}

type limit struct {
	lim ratelimit.Counter
	key string
	by  string
}

func (c *Console) emailLimit(email string) limit {
	return limit{c.byEmail, emailKey(email), "email"}
}

// emailKey is the sign-in throttle's key of an email, as typed (in any case, spaces
// around it): a hash, so that the throttle's table (PostgreSQL's, shared by the
// processes) keeps no address, and what a form sends (any length, a NUL PostgreSQL
// refuses) is a key of one size.
func emailKey(email string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(strings.TrimSpace(email))))
	return "e:" + hex.EncodeToString(sum[:16])
}

func (c *Console) addrLimit(r *req) limit {
	return limit{c.byAddr, "a:" + c.cfg.Grouping.Key(clientAddr(r.Request)), "address"}
}

// requestPasswordReset answers every email alike: the same page, the same status.
func (c *Console) requestPasswordReset(r *req) error {
	ok, err := publicForm(r)
	if err != nil {
		return err
	}
	email := strings.TrimSpace(r.PostFormValue("email"))
	if !ok {
		return c.showPasswordReset(r, http.StatusForbidden, email, false, []string{r.T("console.signin_cookies")})
	}
	if email == "" {
		return c.showPasswordReset(r, http.StatusUnprocessableEntity, email, false, []string{r.T("validation.required")})
	}
	now := time.Now()
	limits := []limit{c.emailLimit(email), c.addrLimit(r)}
	if msg, err := c.throttled(r, now, limits...); err != nil || msg != "" {
		if err != nil {
			return err
		}
		return c.showPasswordReset(r, http.StatusTooManyRequests, email, false, []string{msg})
	}
	if err := count(r, now, limits...); err != nil {
		return err
	}
	if err := c.svc.Sessions.RequestPasswordReset(r.ctx(), email); err != nil {
		return err
	}
	return c.showPasswordReset(r, http.StatusOK, "", true, nil)
}

func (c *Console) showSetPassword(r *req, status int, email string, errs map[string][]string, msgs []string) error {
	c.render(r, status, "passwordresetset", "console.password_reset_title", "", map[string]any{
		"Pre": preSecret(r), "Token": r.PathValue("token"), "Email": email, "Errors": errs, "Messages": msgs})
	return nil
}

// invalidLink answers a reset link that does not work, and counts it against the
// client's address.
func (c *Console) invalidLink(r *req, now time.Time) error {
	if err := count(r, now, c.addrLimit(r)); err != nil {
		return err
	}
	c.render(r, http.StatusNotFound, "passwordreset", "console.password_reset_title", "", map[string]any{
		"Pre": preSecret(r), "Errors": []string{r.T("console.password_reset_invalid")}})
	return nil
}

func (c *Console) setPasswordPage(r *req) error {
	now := time.Now()
	if msg, err := c.throttled(r, now, c.addrLimit(r)); err != nil || msg != "" {
		if err != nil {
			return err
		}
		return c.showPasswordReset(r, http.StatusTooManyRequests, "", false, []string{msg})
	}
	a, err := c.svc.Sessions.PasswordResetAccount(r.ctx(), r.PathValue("token"))
	if errors.Is(err, ops.ErrPasswordResetInvalid) {
		return c.invalidLink(r, now)
	}
	if err != nil {
		return err
	}
	return c.showSetPassword(r, http.StatusOK, a.Email, nil, nil)
}

// setPassword sets the new password, ends every session of the account (the core
// does) and sends the visitor to sign in with it.
func (c *Console) setPassword(r *req) error {
	ok, err := publicForm(r)
	if err != nil {
		return err
	}
	if !ok {
		return c.showSetPassword(r, http.StatusForbidden, "", nil, []string{r.T("console.signin_cookies")})
	}
	now := time.Now()
	if msg, err := c.throttled(r, now, c.addrLimit(r)); err != nil || msg != "" {
		if err != nil {
			return err
		}
		return c.showSetPassword(r, http.StatusTooManyRequests, "", nil, []string{msg})
	}
	token := r.PathValue("token")
	err = c.svc.Sessions.ResetPassword(r.ctx(), token, r.PostFormValue("new_password"), r.PostFormValue("new_password_again"))
	switch {
	case errors.Is(err, ops.ErrPasswordResetInvalid):
		return c.invalidLink(r, now)
	case hosting.IsCode(err, hosting.CodeValidationFailed):
		a, aerr := c.svc.Sessions.PasswordResetAccount(r.ctx(), token)
		if aerr != nil {
			return c.invalidLink(r, now)
		}
		return c.showSetPassword(r, http.StatusUnprocessableEntity, a.Email, c.fieldErrors(r.lang, err), nil)
	case err != nil:
		return err
	}
	setCookie(r.w, r.Request, sessionCookie, "", -1)
	return c.showSignIn(r, http.StatusOK, "", nil, r.T("console.password_reset_done"))
}
