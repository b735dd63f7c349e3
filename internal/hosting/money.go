package hosting

import (
	"fmt"
	"strconv"
	"strings"
)

// Money is an exact amount in ten-thousandths of the currency unit: 12.5 EUR is
// Money(125000). No floating point ever touches money.
type Money int64

// MoneyScale is how many Money units make one currency unit.
const MoneyScale = 10000

// String renders the amount with exactly four decimals, as the API shows money.
func (m Money) String() string {
	sign := ""
	v := int64(m)
	if v < 0 {
		sign = "-"
		v = -v
	}
	return fmt.Sprintf("%s%d.%04d", sign, v/MoneyScale, v%MoneyScale)
}

// ParseMoney reads a decimal amount such as "10", "10.5" or "-0.0125" exactly.
// More than four decimals, exponents and anything not a plain decimal are refused.
func ParseMoney(s string) (Money, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty amount")
	}
	neg := false
	if s[0] == '-' || s[0] == '+' {
		neg = s[0] == '-'
		s = s[1:]
	}
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" || len(frac) > 4 || strings.ContainsAny(whole+frac, "+-eE_ ") {
		return 0, fmt.Errorf("invalid amount %q: want a decimal with at most 4 decimals", s)
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w > (1<<62)/MoneyScale {
		return 0, fmt.Errorf("invalid amount %q", s)
	}
	var f int64
	if frac != "" {
		f, err = strconv.ParseInt(frac+strings.Repeat("0", 4-len(frac)), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("invalid amount %q", s)
		}
	}
	v := Money(w*MoneyScale + f)
	if neg {
		v = -v
	}
	return v, nil
}
