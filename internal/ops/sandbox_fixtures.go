package ops

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// Fixed accounts (serve --sandbox --seed FILE.yaml, docs/api.md, The sandbox): accounts a
// client's CI finds at start, with tokens whose values it hard-codes.

// SandboxTokenPrefix starts every fixed token's value.
const SandboxTokenPrefix = TokenPrefix + "sandbox_"

// fixedTokenRest is what follows SandboxTokenPrefix in a fixed token: 32 characters
// at least, of the URL-safe base64 alphabet, and no more than Authenticate reads (a
// token of at most 200 characters).
var fixedTokenRest = regexp.MustCompile(`^[A-Za-z0-9_-]{32,186}$`)

// CheckFixedToken checks a fixed token's value: SandboxTokenPrefix, then 32 to 186
// characters of A-Z, a-z, 0-9, _ and -.
func CheckFixedToken(value string) error {
	if !strings.HasPrefix(value, SandboxTokenPrefix) || !fixedTokenRest.MatchString(strings.TrimPrefix(value, SandboxTokenPrefix)) {
		return fmt.Errorf("a fixed token's value is %q followed by 32 to 186 characters of A-Z, a-z, 0-9, _ and -", SandboxTokenPrefix)
	}
	return nil
}

// FixedAccount is an account serve --sandbox --seed makes at start: NewAccount (a
// password left empty is a random one), its fixed tokens, and what to seed in it.
type FixedAccount struct {
	NewAccount
	Tokens []FixedToken
	Seed   SeedRequest
}

// FixedToken is a token given by its value. Scopes are as `admin token create` takes
// them ("read,power"; empty: every scope).
type FixedToken struct {
	Name, Value, Scopes string
}

// EnsureFixedAccount makes a fixed account if no account has its email: the account
// with its opening credit, its tokens, and its seed (as Seed makes it), in one
// transaction, so that a start that fails makes none of it. An account that exists
// is left as it is but for the fixed tokens it lacks, which are added: starting again
// with the same file changes nothing. It reports whether it made the account. A token
// value that is another account's, or one of the account's that was revoked or has
// expired, is an error; so is anything the account's own rules refuse (a seed's
// validation error is a *hosting.Error naming the item's field).
func (s *Service) EnsureFixedAccount(ctx context.Context, a FixedAccount) (hosting.Account, bool, error) {
	tokens, err := fixedTokens(a.Tokens)
	if err != nil {
		return hosting.Account{}, false, err
	}
	acct, err := s.store.AccountByEmail(ctx, strings.TrimSpace(a.Email))
	create := errors.Is(err, store.ErrNotFound)
	if err != nil && !create {
		return acct, false, err
	}
	if err := s.findFixedTokens(ctx, acct, create, tokens); err != nil {
		return acct, false, err
	}
	err = s.atomically(ctx, func(ctx context.Context) error {
		if create {
			made, err := s.createFixedAccount(ctx, a.NewAccount)
			if err != nil {
				return err
			}
			acct = made
		}
		if err := s.addFixedTokens(ctx, acct, tokens); err != nil || !create {
			return err
		}
		_, err := s.Seed(ctx, hosting.Principal{Account: acct}, a.Seed)
		return err
	})
	if err != nil {
		return hosting.Account{}, false, err
	}
	if create {
		if acct, err = s.store.Account(ctx, acct.ID); err != nil {
			return acct, true, err
		}
	}
	return acct, create, nil
}

// fixedToken is a fixed token to have: the token, and whether the account has it.
type fixedToken struct {
	hosting.Token
	have bool
}

// fixedTokens checks the fixed tokens' values, names and scopes, and returns the
// tokens they are.
func fixedTokens(fts []FixedToken) ([]fixedToken, error) {
	tokens := make([]fixedToken, len(fts))
	for i, ft := range fts {
		if err := CheckFixedToken(ft.Value); err != nil {
			return nil, fmt.Errorf("token %q: %w", ft.Name, err)
		}
		scopes := ft.Scopes
		if scopes == "" {
			scopes = allScopes()
		}
		name, sc, err := checkToken(ft.Name, scopes)
		if err != nil {
			return nil, fmt.Errorf("token %q: %w", ft.Name, err)
		}
		tokens[i].Token = hosting.Token{Name: name, Hash: HashToken(ft.Value), Scopes: sc}
	}
	return tokens, nil
}

// findFixedTokens marks the tokens the account has already (have). A token value
// that is another account's (any account's, when the account is still to be
// created), or one of the account's that was revoked or has expired, is an error.
func (s *Service) findFixedTokens(ctx context.Context, acct hosting.Account, create bool, tokens []fixedToken) error {
	for i := range tokens {
		t, owner, err := s.store.TokenByHash(ctx, tokens[i].Hash)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return err
		case create || owner.ID != acct.ID:
			return fmt.Errorf("token %q: its value is a token of another account (%d)", tokens[i].Name, owner.ID)
		case !t.Usable(s.Now()):
			return fmt.Errorf("token %q: the account's token of this value (%d) was revoked or has expired", tokens[i].Name, t.ID)
		default:
			tokens[i].have = true
		}
	}
	return nil
}

// createFixedAccount creates a fixed account; without a password it gets a random
// one, unknown to anyone: the console stays closed.
func (s *Service) createFixedAccount(ctx context.Context, n NewAccount) (hosting.Account, error) {
	if n.Password == "" {
		n.Password, _ = NewTokenSecret()
	}
	return s.CreateAccount(ctx, n)
}

// addFixedTokens gives the account the fixed tokens it does not have.
func (s *Service) addFixedTokens(ctx context.Context, acct hosting.Account, tokens []fixedToken) error {
	for _, t := range tokens {
		if t.have {
			continue
		}
		t.AccountID, t.CreatedAt = acct.ID, s.Now()
		if _, err := s.addToken(ctx, t.Token); err != nil {
			return fmt.Errorf("token %q: %w", t.Name, err)
		}
	}
	return nil
}

// allScopes is every scope, as ParseScopes reads them.
func allScopes() string {
	names := make([]string, len(hosting.AllScopes))
	for i, sc := range hosting.AllScopes {
		names[i] = string(sc)
	}
	return strings.Join(names, ",")
}
