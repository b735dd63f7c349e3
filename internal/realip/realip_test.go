package realip

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	good := []string{"10.0.0.5", "10.0.0.0/8", "::1", "fd00::/8", " 192.168.1.0/24 ", "0.0.0.0/0", "::/0", "2001:db8::1/128"}
	if _, err := Parse(good); err != nil {
		t.Errorf("Parse(%q): %v", good, err)
	}
	for _, bad := range []string{"", "10.0.0.0/33", "10.0.0.1/8", "example.com", "10.0.0", "10.0.0.0/", "/8", "fe80::1%eth0", "::/129", "10.0.0.0/-1", "1.2.3.4:80"} {
		if _, err := Parse([]string{bad}); err == nil {
			t.Errorf("Parse(%q): no error", bad)
		}
	}
	if p, _ := Parse(nil); !p.Empty() {
		t.Error("no values: not empty")
	}
}

func TestClient(t *testing.T) {
	t.Parallel()
	p, err := Parse([]string{"10.0.0.0/24", "fd00::/8", "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, remote string
		xff          []string
		want         string
	}{
		{"no header", "10.0.0.5:4000", nil, "10.0.0.5"},
		{"untrusted peer lies", "203.0.113.9:4000", []string{"198.51.100.1"}, "203.0.113.9"},
		{"untrusted peer, trusted claim", "203.0.113.9:4000", []string{"10.0.0.7"}, "203.0.113.9"},
		{"one proxy", "10.0.0.5:4000", []string{"198.51.100.1"}, "198.51.100.1"},
		{"client spoofs a prefix", "10.0.0.5:4000", []string{"6.6.6.6, 198.51.100.1"}, "198.51.100.1"},
		{"two proxies", "10.0.0.5:4000", []string{"198.51.100.1, 10.0.0.6"}, "198.51.100.1"},
		{"header lines", "10.0.0.5:4000", []string{"6.6.6.6", "198.51.100.1", "10.0.0.6"}, "198.51.100.1"},
		{"all trusted", "10.0.0.5:4000", []string{"10.0.0.8, 10.0.0.6"}, "10.0.0.8"},
		{"garbage right", "10.0.0.5:4000", []string{"198.51.100.1, unknown"}, "10.0.0.5"},
		{"garbage behind a proxy", "10.0.0.5:4000", []string{"unknown, 10.0.0.6"}, "10.0.0.6"},
		{"empty entries", "10.0.0.5:4000", []string{" , 198.51.100.1 ,, "}, "198.51.100.1"},
		{"empty header", "10.0.0.5:4000", []string{""}, "10.0.0.5"},
		{"with port", "10.0.0.5:4000", []string{"198.51.100.1:5678"}, "198.51.100.1"},
		{"ipv6", "[fd00::2]:4000", []string{"2001:db8::7"}, "2001:db8::7"},
		{"ipv6 with port", "[fd00::2]:4000", []string{"[2001:db8::7]:443"}, "2001:db8::7"},
		{"ipv6 bracketed", "[fd00::2]:4000", []string{"[2001:db8::7]"}, "2001:db8::7"},
		{"ipv6 zone", "[fd00::2]:4000", []string{"fe80::1%eth0"}, "fe80::1"},
		{"mapped peer", "[::ffff:10.0.0.5]:4000", []string{"198.51.100.1"}, "198.51.100.1"},
		{"mapped entry", "10.0.0.5:4000", []string{"::ffff:198.51.100.1"}, "198.51.100.1"},
		{"single address proxy", "127.0.0.1:4000", []string{"198.51.100.1"}, "198.51.100.1"},
		{"near miss", "127.0.0.2:4000", []string{"198.51.100.1"}, "127.0.0.2"},
		{"no port", "10.0.0.5", []string{"198.51.100.1"}, "198.51.100.1"},
		{"obfuscated", "10.0.0.5:4000", []string{"_hidden"}, "10.0.0.5"},
	}
	for _, c := range cases {
		if got := p.Client(c.remote, c.xff); got != c.want {
			t.Errorf("%s: Client(%q, %q) = %q, want %q", c.name, c.remote, c.xff, got, c.want)
		}
	}
	none, _ := Parse(nil)
	if got := none.Client("10.0.0.5:4000", []string{"198.51.100.1"}); got != "10.0.0.5" {
		t.Errorf("no trusted proxies: %q", got)
	}
}

func TestHandler(t *testing.T) {
	t.Parallel()
	p, _ := Parse([]string{"192.0.2.0/24"})
	var seen string
	h := p.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = r.RemoteAddr }))
	r := httptest.NewRequest("GET", "/", nil) // RemoteAddr 192.0.2.1:1234
	r.Header.Set("X-Forwarded-For", "198.51.100.1")
	h.ServeHTTP(httptest.NewRecorder(), r)
	if seen != "198.51.100.1:0" || r.RemoteAddr != "192.0.2.1:1234" {
		t.Errorf("handler saw %q, request left at %q", seen, r.RemoteAddr)
	}
	r = httptest.NewRequest("GET", "/", nil)
	h.ServeHTTP(httptest.NewRecorder(), r)
	if seen != "192.0.2.1:1234" {
		t.Errorf("without the header the handler saw %q", seen)
	}
}
