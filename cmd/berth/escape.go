package main

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// What berth prints of an answer (a name, a status, an error's message) is anyone's
// with a token of the account, or the server's: a terminal must not take it as
// commands. escape shows every character that could act on a terminal as a visible
// escape, as Go writes them: C0 controls and DEL as \x1b, C1 controls and the bidi
// controls that reorder a line as \u009b and \u202e, and a byte that is not UTF-8 as
// \xff (docs/SECURITY.md, API10). The rest, backslashes and all, is shown as it is.
func escape(s string) string { return escapeKeeping(s, "") }

// escapeText is escape for text of several lines: it keeps newlines and tabs.
func escapeText(s string) string { return escapeKeeping(s, "\n\t") }

func escapeKeeping(s, keep string) string {
	bad := func(r rune) bool { return unsafe(r) && !strings.ContainsRune(keep, r) }
	if strings.IndexFunc(s, bad) < 0 && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x80 && bad(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case bad(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// unsafe reports a control character (C0, DEL, C1), a bidi control, or a line or
// paragraph separator.
func unsafe(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069,
		r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

// escapeJSON makes JSON safe for a terminal without changing what it says: the
// encoder writes C0 controls as \u00XX already, and this writes DEL, C1 and the other
// characters of unsafe as \uXXXX too (they can only be inside strings, where the
// escape means the same character).
func escapeJSON(b []byte) []byte {
	s := string(b)
	if strings.IndexFunc(s, unsafe) < 0 {
		return b
	}
	var out strings.Builder
	for _, r := range s {
		if unsafe(r) && r >= 0x20 {
			fmt.Fprintf(&out, `\u%04x`, r)
		} else {
			out.WriteRune(r)
		}
	}
	return []byte(out.String())
}
