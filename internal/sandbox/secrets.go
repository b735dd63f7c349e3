package sandbox

import (
	"regexp"
	"strings"
)

// The secrets the API takes or gives, which the request journal never keeps
// (docs/SECURITY.md, "The sandbox"). Today: a server's root password (taken by POST
// /servers), API tokens (taken in Authorization, which is never kept; none is given),
// and console tickets (given by POST /servers/{id}/console inside its url, taken in
// the console WebSocket's query). A resource that brings a secret adds the name of
// the member (or query parameter) that carries it to secretNames, and the prefix its
// values start with, if any, to secretPrefixes: nothing else changes.
var (
	// secretNames are the JSON members (at any depth, in any case) and query
	// parameters that hold a secret; a member's value is replaced whole. (Not
	// "token": GET /me's describes the token and holds none of it; a token is found
	// by its prefix.)
	secretNames = []string{"root_password", "password", "secret", "ticket"}
	// secretPrefixes start a secret wherever it is in a string: API tokens
	// (ops.TokenPrefix; berth_sandbox_ ones too) and console tickets
	// (ops.ConsoleTicketPrefix).
	secretPrefixes = []string{"berth_", "berthc_"}
)

var (
	// secretValue is a value that starts with a secret prefix: the prefix and at least
	// 16 characters of the base64url alphabet (a token has 43, a sandbox's fixed one
	// at least 32).
	secretValue = regexp.MustCompile(`(?:` + alternatives(secretPrefixes) + `)[A-Za-z0-9_-]{16,}`)
	// secretParam is a query parameter named for a secret, and its value, in a query
	// string or in a URL inside a string (not a value redactText has quoted already).
	secretParam = regexp.MustCompile(`(?i)((?:^|[?&;])(?:` + alternatives(secretNames) + `)=)[^&#;\s"'<>\[][^&#;\s"'<>]*`)
	// secretText is a secret member and its value in text that is not JSON (or was
	// cut): a JSON string, to its end or the text's, or a bare word (a form's
	// root_password=...).
	secretText = regexp.MustCompile(`(?i)((?:` + alternatives(secretNames) + `)"?\s*[:=]\s*)("(?:[^"\\]|\\.)*"?|[^\s,&}\]]*)`)
)

func alternatives(words []string) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = regexp.QuoteMeta(w)
	}
	return strings.Join(quoted, "|")
}

// secretKey reports whether a JSON member holds a secret the journal must not keep.
func secretKey(name string) bool {
	for _, n := range secretNames {
		if strings.EqualFold(name, n) {
			return true
		}
	}
	return false
}

// RedactString is s without the secrets found in any string: every value that
// starts with a secret prefix, and the value of every query parameter named for a
// secret (a URL's ticket=... keeps its URL, its ticket replaced by [redacted]).
func RedactString(s string) string {
	s = secretParam.ReplaceAllString(s, "${1}"+Redacted)
	return secretValue.ReplaceAllString(s, Redacted)
}

// redactText is text that is not JSON (or was cut) without its secrets: those of
// RedactString, and the value after any secret member's name.
func redactText(text string) string {
	return RedactString(secretText.ReplaceAllString(text, `${1}"`+Redacted+`"`))
}
