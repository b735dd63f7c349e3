package client

import (
	"net/http"
	"testing"
	"time"
)

func TestParseRateLimit(t *testing.T) {
	t.Parallel()
	h := func(kv ...string) http.Header {
		out := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			out.Set(kv[i], kv[i+1])
		}
		return out
	}
	for _, tc := range []struct {
		name string
		h    http.Header
		want RateLimit
		ok   bool
	}{
		{"without X-", h("RateLimit-Limit", "120", "RateLimit-Remaining", "7", "RateLimit-Reset", "1795670166"),
			RateLimit{120, 7, time.Unix(1795670166, 0)}, true},
		{"with X-", h("X-RateLimit-Limit", "120", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "0"),
			RateLimit{120, 0, time.Unix(0, 0)}, true},
		{"both: the form without X- wins", h("RateLimit-Limit", "60", "X-RateLimit-Limit", "120",
			"RateLimit-Remaining", "1", "RateLimit-Reset", "5"), RateLimit{60, 1, time.Unix(5, 0)}, true},
		{"spaces around", h("RateLimit-Limit", " 3 ", "RateLimit-Remaining", "2", "RateLimit-Reset", "9"),
			RateLimit{3, 2, time.Unix(9, 0)}, true},
		{"none", h(), RateLimit{}, false},
		{"reset missing", h("RateLimit-Limit", "120", "RateLimit-Remaining", "7"), RateLimit{}, false},
		{"empty", h("RateLimit-Limit", "", "RateLimit-Remaining", "7", "RateLimit-Reset", "1"), RateLimit{}, false},
		{"negative", h("RateLimit-Limit", "120", "RateLimit-Remaining", "-1", "RateLimit-Reset", "1"), RateLimit{}, false},
		{"not a number", h("RateLimit-Limit", "lots", "RateLimit-Remaining", "1", "RateLimit-Reset", "1"), RateLimit{}, false},
		{"a fraction", h("RateLimit-Limit", "1.5", "RateLimit-Remaining", "1", "RateLimit-Reset", "1"), RateLimit{}, false},
		{"remaining above the limit", h("RateLimit-Limit", "2", "RateLimit-Remaining", "3", "RateLimit-Reset", "1"), RateLimit{}, false},
		{"2^63", h("RateLimit-Limit", "9223372036854775808", "RateLimit-Remaining", "1", "RateLimit-Reset", "1"), RateLimit{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseRateLimit(tc.h)
			if ok != tc.ok || got.Limit != tc.want.Limit || got.Remaining != tc.want.Remaining || !got.Reset.Equal(tc.want.Reset) {
				t.Errorf("parseRateLimit = %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
