package hosting

import "testing"

func TestMoneyRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want Money
		out  string
	}{
		{"10", 100000, "10.0000"},
		{"10.5", 105000, "10.5000"},
		{"0.0001", 1, "0.0001"},
		{"-0.0125", -125, "-0.0125"},
		{"+3.25", 32500, "3.2500"},
		{"0", 0, "0.0000"},
	} {
		got, err := ParseMoney(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseMoney(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			continue
		}
		if got.String() != tc.out {
			t.Errorf("%v.String() = %q, want %q", got, got.String(), tc.out)
		}
	}
	for _, bad := range []string{"", "1.23456", "1e3", "abc", ".5", "1..2", "1,5", "--1", "99999999999999999999"} {
		if _, err := ParseMoney(bad); err == nil {
			t.Errorf("ParseMoney(%q) succeeded, want error", bad)
		}
	}
}
