package webhook

import (
	"errors"
	"net/netip"
	"testing"
)

// ownPools stands for the networks Berth hands its servers' addresses from.
var ownPools = []netip.Prefix{netip.MustParsePrefix("198.51.100.0/24"), netip.MustParsePrefix("2001:db8:b::/48")}

func TestRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ addr, want string }{
		{"127.0.0.1", "loopback"},
		{"127.255.255.254", "loopback"},
		{"::1", "loopback"},
		{"10.0.0.1", "private"},
		{"10.255.255.255", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.168.1.1", "private"},
		{"fc00::1", "unique-local"},
		{"fd12:3456::1", "unique-local"},
		{"169.254.169.254", "link-local"},
		{"169.254.0.1", "link-local"},
		{"fe80::1", "link-local"},
		{"fe80::1%eth0", "link-local"},
		{"100.64.0.1", "cgnat"},
		{"100.127.255.255", "cgnat"},
		{"224.0.0.1", "multicast"},
		{"239.255.255.250", "multicast"},
		{"ff02::1", "multicast"},
		{"0.0.0.0", "unspecified"},
		{"0.1.2.3", "unspecified"},
		{"::", "unspecified"},
		{"255.255.255.255", "broadcast"},
		{"::ffff:127.0.0.1", "loopback"},
		{"::ffff:10.0.0.1", "private"},
		{"::ffff:169.254.169.254", "link-local"},
		{"::ffff:100.64.0.1", "cgnat"},
		{"::ffff:0.0.0.0", "unspecified"},
		{"64:ff9b::a9fe:a9fe", "link-local"}, // NAT64 of 169.254.169.254
		{"64:ff9b::7f00:1", "loopback"},
		{"198.51.100.7", "own pool"},
		{"::ffff:198.51.100.7", "own pool"},
		{"2001:db8:b::7", "own pool"},
		// Allowed: public addresses, and the edges of the refused ranges.
		{"203.0.113.5", ""},
		{"8.8.8.8", ""},
		{"172.15.255.255", ""},
		{"172.32.0.1", ""},
		{"100.63.255.255", ""},
		{"100.128.0.1", ""},
		{"169.253.255.255", ""},
		{"198.51.101.1", ""},
		{"2001:4860:4860::8888", ""},
		{"2001:db8:c::1", ""},
		{"64:ff9b::cb00:7105", ""}, // NAT64 of 203.0.113.5
	} {
		if got := Refused(netip.MustParseAddr(tc.addr), ownPools); got != tc.want {
			t.Errorf("Refused(%s) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url          string
		allowPrivate bool
		rule         string // "" when allowed
	}{
		{"https://hooks.example.com/berth", false, ""},
		{"https://hooks.example.com:8443/berth?x=1", false, ""},
		{"https://203.0.113.5/hook", false, ""},
		{"https://[2001:4860:4860::8888]/hook", false, ""},
		{"https://localhost/hook", false, ""}, // a name: checked at each attempt
		{"http://hooks.example.com/berth", false, RuleScheme},
		{"http://hooks.example.com/berth", true, ""},
		{"ftp://hooks.example.com/", true, RuleScheme},
		{"HTTPS://hooks.example.com/", false, ""},
		{"//hooks.example.com/", false, RuleURL},
		{"/hook", false, RuleURL},
		{"hooks.example.com", false, RuleURL},
		{"https:hooks.example.com", false, RuleURL},
		{"https://user:pw@hooks.example.com/", false, RuleUserinfo},
		{"https://user@hooks.example.com/", true, RuleUserinfo},
		{"https:///hook", false, RuleHost},
		{"https://:443/hook", false, RuleHost},
		{"https://hooks.example.com:1/", false, ""},
		{"https://hooks.example.com:65535/", false, ""},
		{"https://hooks.example.com:/", false, ""}, // no port: https's
		{"https://hooks.example.com:0/", false, RulePort},
		{"https://hooks.example.com:65536/", false, RulePort},
		{"https://hooks.example.com:99999999999999999999/", false, RulePort},
		{"https://[2001:db8::1]:0/", true, RulePort},
		{"https://127.1/", false, RuleHost},
		{"https://2130706433/", false, RuleHost},
		{"https://0x7f.1/", false, RuleHost},
		{"https://0x7f000001/", true, RuleHost},
		{"https://127.0.0.1/", false, RuleAddress},
		{"https://[::1]/", false, RuleAddress},
		{"https://10.0.0.1/", false, RuleAddress},
		{"https://172.16.0.1/", false, RuleAddress},
		{"https://192.168.0.1/", false, RuleAddress},
		{"https://[fd00::1]/", false, RuleAddress},
		{"https://169.254.169.254/latest/meta-data/", false, RuleAddress},
		{"https://100.64.0.1/", false, RuleAddress},
		{"https://[::ffff:10.0.0.1]/", false, RuleAddress},
		{"https://[fe80::1%25eth0]/", false, RuleAddress},
		{"https://198.51.100.7/", false, RuleAddress}, // own pool
		{"https://0.0.0.0/", false, RuleAddress},
		{"https://127.0.0.1/", true, ""},
		{"http://10.0.0.1:8080/", true, ""},
		{"://x", false, RuleURL},
		{"https://exa mple.com/", false, RuleURL},
	} {
		err := CheckURL(tc.url, tc.allowPrivate, ownPools)
		var ue *URLError
		switch {
		case tc.rule == "" && err != nil:
			t.Errorf("CheckURL(%q, %v) = %v, want nil", tc.url, tc.allowPrivate, err)
		case tc.rule != "" && (!errors.As(err, &ue) || ue.Rule != tc.rule):
			t.Errorf("CheckURL(%q, %v) = %v, want the rule %q", tc.url, tc.allowPrivate, err, tc.rule)
		}
	}
}

func TestCheckURLNamesTheAddress(t *testing.T) {
	t.Parallel()
	err := CheckURL("https://169.254.169.254/latest/meta-data/", false, nil)
	if got, want := err.Error(), "url's address 169.254.169.254 is refused: link-local"; got != want {
		t.Errorf("error = %q, want %q", got, want)
	}
	var ue *URLError
	if !errors.As(err, &ue) || ue.Detail != "link-local" || ue.Addr != netip.MustParseAddr("169.254.169.254") {
		t.Errorf("error = %#v, want the address and its reason", err)
	}
}
