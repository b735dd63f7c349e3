package hosting

import (
	"math"
	"testing"
	"time"
)

// TestZoneSerials: a new zone's serial is YYYYMMDD01 of its UTC date; a change takes
// the greater, in RFC 1982 arithmetic, of old+1 and YYYYMMDD00 of its UTC day, always
// greater than the old serial, wrapping past 2^32-1 to 1.
func TestZoneSerials(t *testing.T) {
	t.Parallel()
	day := time.Date(2026, 11, 27, 23, 30, 0, 0, time.UTC)
	if got := NewZoneSerial(day); got != 2026112701 {
		t.Errorf("NewZoneSerial(%s) = %d, want 2026112701", day, got)
	}
	// 23:30 in Berlin on the 27th is the 27th in UTC; 00:30 in Berlin on the 28th too.
	berlin := time.FixedZone("CET", 3600)
	if got := NewZoneSerial(time.Date(2026, 11, 28, 0, 30, 0, 0, berlin)); got != 2026112701 {
		t.Errorf("NewZoneSerial of the 28th 00:30 CET = %d, want the UTC date's 2026112701", got)
	}
	for _, c := range []struct {
		name string
		old  uint32
		now  time.Time
		want uint32
	}{
		{"the day's first change after creation", 2026112701, day, 2026112702},
		{"a change the next day", 2026112705, day.Add(24 * time.Hour), 2026112800},
		{"a change days later", 2026112705, time.Date(2027, 1, 2, 0, 0, 0, 0, time.UTC), 2027010200},
		{"the 100th change of a day runs into the next day's serials", 2026112799, day, 2026112800},
		{"an old serial ahead of the date goes on by one", 2030010100, day, 2030010101},
		{"a serial at 0 (never written, but read) goes to the date", 0, day, 2026112700},
		{"2^32-1 wraps to 1, the date being behind in RFC 1982", math.MaxUint32, time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC), 1},
		{"after a wrap a date ahead by under 2^31 is taken", 5, day, 2026112700},
		{"after a wrap a date ahead by over 2^31 is behind", 5, time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC), 6},
		{"a date exactly 2^31 ahead of the old serial is undefined: old+1", 2026112700 + 1<<31, day, 2026112700 + 1<<31 + 1},
		{"a date 2^31-1 ahead of the old serial is taken", 2026112700 + 1<<31 + 1, day, 2026112700},
	} {
		got := NextZoneSerial(c.old, c.now)
		if got != c.want {
			t.Errorf("%s: NextZoneSerial(%d, %s) = %d, want %d", c.name, c.old, c.now.Format(time.DateOnly), got, c.want)
		}
		if !SerialGreater(got, c.old) {
			t.Errorf("%s: %d is not greater than %d", c.name, got, c.old)
		}
	}
}

// TestSerialGreater: RFC 1982 §3.2 for 32 bits, its boundaries each a row.
func TestSerialGreater(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b uint32
		want bool
	}{
		{1, 0, true},
		{0, 1, false},
		{5, 5, false},
		{0, math.MaxUint32, true},
		{1, math.MaxUint32, true},
		{math.MaxUint32, 0, false},
		{1<<31 - 1, 0, true},
		{1 << 31, 0, false}, // undefined: neither is greater
		{0, 1 << 31, false},
		{1<<31 + 1, 0, false},
		{0, 1<<31 + 1, true},
	} {
		if got := SerialGreater(c.a, c.b); got != c.want {
			t.Errorf("SerialGreater(%d, %d) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestServerHasAddress: a server's IPv4 address and its IPv6 /64 are its addresses,
// nothing else.
func TestServerHasAddress(t *testing.T) {
	t.Parallel()
	const v4, v6 = "192.0.2.10", "2001:db8:0:7::1"
	for _, c := range []struct {
		ipv4, ipv6, ip string
		want           bool
	}{
		{v4, v6, "192.0.2.10", true},
		{v4, v6, "192.0.2.11", false},
		{v4, v6, "2001:db8:0:7::1", true},
		{v4, v6, "2001:db8:0:7::2", true},
		{v4, v6, "2001:db8:0:7:ffff:ffff:ffff:ffff", true},
		{v4, v6, "2001:DB8:0:7::abc", true},
		{v4, v6, "2001:db8:0:8::1", false},
		{v4, v6, "2001:db8:0:6:ffff:ffff:ffff:ffff", false},
		{v4, v6, "::ffff:192.0.2.10", false},
		{v4, v6, "2001:db8:0:7::1%eth0", false},
		{v4, v6, "192.0.2.10/32", false},
		{v4, v6, "", false},
		{v4, v6, "mail.example.com", false},
		{"", v6, "192.0.2.10", false},
		{v4, "", "2001:db8:0:7::1", false},
		{"", "", "", false},
		{v4, "192.0.2.10", "192.0.2.10", true}, // an IPv6 field holding IPv4 gives no /64
		{v4, "192.0.2.10", "::", false},
	} {
		if got := ServerHasAddress(c.ipv4, c.ipv6, c.ip); got != c.want {
			t.Errorf("ServerHasAddress(%q, %q, %q) = %v, want %v", c.ipv4, c.ipv6, c.ip, got, c.want)
		}
	}
}
