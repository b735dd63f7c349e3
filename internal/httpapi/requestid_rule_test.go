package httpapi

import (
	"net/http"
	"strings"
	"testing"
)

// TestRequestIDRule is the rule byte by byte, control characters included (net/http
// refuses those in a header before the API sees them, so TestRequestID cannot send
// them): a client's id is kept when it is the one X-Request-Id field and holds 1 to
// 128 characters of 0x21-0x7E.
func TestRequestIDRule(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		values []string
		keep   bool
	}{
		{"absent", nil, false},
		{"empty", []string{""}, false},
		{"lowest visible", []string{"!"}, true},
		{"highest visible", []string{"~"}, true},
		{"128", []string{strings.Repeat("a", 128)}, true},
		{"129", []string{strings.Repeat("a", 129)}, false},
		{"space", []string{"a b"}, false},
		{"NUL", []string{"a\x00"}, false},
		{"newline", []string{"a\nb"}, false},
		{"DEL", []string{"a\x7f"}, false},
		{"byte 0x80", []string{"a\x80"}, false},
		{"UTF-8", []string{"ü"}, false},
		{"twice", []string{"a", "b"}, false},
	} {
		h := http.Header{}
		if c.values != nil {
			h[requestIDHeader] = c.values
		}
		got := requestID(h)
		if c.keep && got != c.values[0] {
			t.Errorf("%s: %q, want the client's", c.name, got)
		}
		if !c.keep && (len(got) != 32 || strings.Trim(got, "0123456789abcdef") != "") {
			t.Errorf("%s: %q, want a new id of 32 hex digits", c.name, got)
		}
	}
}

// BenchmarkNewRequestID is what a new id costs.
func BenchmarkNewRequestID(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = newRequestID()
	}
}
