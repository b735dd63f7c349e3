package webhook

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// The rules CheckURL holds a webhook's url to; a URLError names the one that failed.
const (
	RuleURL      = "url"      // it does not parse as an absolute URL
	RuleScheme   = "scheme"   // not https (http only when private addresses are allowed)
	RuleUserinfo = "userinfo" // it carries a user name or password
	RuleHost     = "host"     // no host, or a numeric one that is not an IP address
	RulePort     = "port"     // a port that is not 1 to 65535
	RuleAddress  = "address"  // its host is a refused address (Refused says why)
)

// URLError is a webhook url CheckURL refuses; the API answers it with 422 naming the
// field url (docs/webhooks.md, "Where Berth delivers").
type URLError struct {
	Rule   string     // one of the Rule constants
	Addr   netip.Addr // for RuleAddress, the address
	Detail string     // for RuleAddress, the reason Refused gives
}

func (e *URLError) Error() string {
	switch e.Rule {
	case RuleScheme:
		return "url must use https"
	case RuleUserinfo:
		return "url must not carry a user name or password"
	case RuleHost:
		return "url must name a host: a DNS name or an IP address"
	case RuleAddress:
		return fmt.Sprintf("url's address %s is refused: %s", e.Addr, e.Detail)
	default:
		return "url is not an absolute URL"
	}
}

// CheckURL checks a webhook's url when it is created or changed: an absolute https
// URL (http too when allowPrivate, as under --webhook-allow-private), without user
// name or password, with a host; a host written as an IP address must not be one
// Refused refuses (unless allowPrivate). A DNS name is checked again at each
// attempt, on the addresses it then has. It fails with a *URLError.
func CheckURL(raw string, allowPrivate bool, own []netip.Prefix) error {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" {
		return &URLError{Rule: RuleURL}
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && allowPrivate:
	default:
		return &URLError{Rule: RuleScheme}
	}
	if u.User != nil {
		return &URLError{Rule: RuleUserinfo}
	}
	// url.Parse takes any digits for a port; nothing listens on 0 or past 65535.
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return &URLError{Rule: RulePort}
		}
	}
	return checkHost(u.Hostname(), allowPrivate, own)
}

// checkHost is CheckURL's rule on the host of a url.
func checkHost(host string, allowPrivate bool, own []netip.Prefix) error {
	if host == "" {
		return &URLError{Rule: RuleHost}
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		// A name whose last label is numeric ("127.1", "2130706433", "0x7f.1") is no
		// DNS name with a top-level domain but an address some resolvers would read.
		if numericLabel(host[strings.LastIndex(host, ".")+1:]) {
			return &URLError{Rule: RuleHost}
		}
		return nil
	}
	if allowPrivate {
		return nil
	}
	if r := Refused(addr, own); r != "" {
		return &URLError{Rule: RuleAddress, Addr: addr, Detail: r}
	}
	return nil
}

// numericLabel says whether a label reads as a number: decimal digits, or hex after 0x.
func numericLabel(l string) bool {
	l = strings.ToLower(l)
	if h, ok := strings.CutPrefix(l, "0x"); ok {
		l = h
		return strings.Trim(l, "0123456789abcdef") == ""
	}
	return l != "" && strings.Trim(l, "0123456789") == ""
}
