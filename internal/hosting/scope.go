package hosting

import (
	"slices"
	"strings"
)

// Scope is a permission a token holds (docs/api.md, Tokens and scopes).
type Scope string

const (
	ScopeRead      Scope = "read"
	ScopePower     Scope = "power"
	ScopeServers   Scope = "servers"
	ScopeSnapshots Scope = "snapshots"
	ScopeSSHKeys   Scope = "ssh-keys"
	ScopeRecipes   Scope = "recipes"
	ScopeDomains   Scope = "domains"
	ScopeStorage   Scope = "storage"
	ScopeLicenses  Scope = "licenses"
	ScopeTickets   Scope = "tickets"
)

// AllScopes lists every scope in the order of docs/api.md, Tokens and scopes.
var AllScopes = []Scope{ScopeRead, ScopePower, ScopeServers, ScopeSnapshots, ScopeSSHKeys,
	ScopeRecipes, ScopeDomains, ScopeStorage, ScopeLicenses, ScopeTickets}

// ScopeAll is what a route needing every scope names: changing webhooks, which are
// sent every kind of event (docs/api.md, Webhooks). It is no scope a token holds:
// Scopes.Missing says what a token lacks of it.
const ScopeAll Scope = "all"

// Scopes is a set of scopes kept in the order of docs/api.md, Tokens and scopes.
type Scopes []Scope

// ParseScopes reads a comma-separated list. read is always added. Unknown scope names
// are returned in bad.
func ParseScopes(list string) (s Scopes, bad []string) {
	want := map[Scope]bool{ScopeRead: true}
	for _, p := range strings.Split(list, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if !slices.Contains(AllScopes, Scope(p)) {
			bad = append(bad, p)
			continue
		}
		want[Scope(p)] = true
	}
	for _, sc := range AllScopes {
		if want[sc] {
			s = append(s, sc)
		}
	}
	return s, bad
}

// Missing lists what the set lacks of need: need itself, or for ScopeAll every scope
// of AllScopes it lacks, in the order of docs/api.md, Tokens and scopes. None when it holds it.
func (s Scopes) Missing(need Scope) []Scope {
	if need != ScopeAll {
		if s.Has(need) {
			return nil
		}
		return []Scope{need}
	}
	var out []Scope
	for _, sc := range AllScopes {
		if !s.Has(sc) {
			out = append(out, sc)
		}
	}
	return out
}

// Has reports whether sc is in the set.
func (s Scopes) Has(sc Scope) bool { return slices.Contains(s, sc) }

// String joins the scopes with commas, as they are stored.
func (s Scopes) String() string {
	parts := make([]string, len(s))
	for i, sc := range s {
		parts[i] = string(sc)
	}
	return strings.Join(parts, ",")
}
