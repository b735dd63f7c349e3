package powerdns

import (
	"errors"
	"net/http"
	"reflect"
	"testing"

	"github.com/berthhq/berth/internal/nameserver"
)

func set(name, typ string, ttl int, values ...string) rrset {
	s := rrset{Name: name, Type: typ, TTL: ttl}
	for _, v := range values {
		s.Records = append(s.Records, record{Content: v})
	}
	return s
}

func replace(s rrset) rrset { s.ChangeType = changeReplace; return s }

func del(name, typ string) rrset {
	return rrset{Name: name, Type: typ, ChangeType: changeDelete, Records: []record{}}
}

func TestDiff(t *testing.T) {
	t.Parallel()
	soa := set("example.com.", "SOA", 3600, "ns1.berth.test. hostmaster.example.com. 2 10800 3600 1209600 300")
	oldSOA := set("example.com.", "SOA", 3600, "ns1.berth.test. hostmaster.example.com. 1 10800 3600 1209600 300")
	www := set("www.example.com.", "A", 300, "192.0.2.1", "192.0.2.2")
	disabled := www
	disabled.Records = []record{{Content: "192.0.2.1"}, {Content: "192.0.2.2", Disabled: true}}
	for _, tc := range []struct {
		name       string
		have, want []rrset
		patch      []rrset
	}{
		{"alike", []rrset{soa, www}, []rrset{soa, www}, nil},
		{"records in another order", []rrset{soa, set("www.example.com.", "A", 300, "192.0.2.2", "192.0.2.1")},
			[]rrset{soa, www}, nil},
		{"names in another case", []rrset{soa, set("WWW.Example.com.", "a", 300, "192.0.2.1", "192.0.2.2")},
			[]rrset{soa, www}, nil},
		{"an AAAA in another form", []rrset{soa, set("x.example.com.", "AAAA", 60, "::1.2.3.4", "2001:DB8::1")},
			[]rrset{soa, set("x.example.com.", "AAAA", 60, "::102:304", "2001:db8::1")}, nil},
		{"another AAAA", []rrset{soa, set("x.example.com.", "AAAA", 60, "::1.2.3.4")},
			[]rrset{soa, set("x.example.com.", "AAAA", 60, "::102:305")},
			[]rrset{replace(set("x.example.com.", "AAAA", 60, "::102:305"))}},
		{"new serial", []rrset{oldSOA, www}, []rrset{soa, www}, []rrset{replace(soa)}},
		{"new TTL", []rrset{soa, set("www.example.com.", "A", 60, "192.0.2.1", "192.0.2.2")},
			[]rrset{soa, www}, []rrset{replace(www)}},
		{"a record less", []rrset{soa, set("www.example.com.", "A", 300, "192.0.2.1", "192.0.2.2", "192.0.2.3")},
			[]rrset{soa, www}, []rrset{replace(www)}},
		{"a disabled record is not Berth's", []rrset{soa, disabled}, []rrset{soa, www}, []rrset{replace(www)}},
		{"new RRset", []rrset{soa}, []rrset{soa, www}, []rrset{replace(www)}},
		{"same name, other type", []rrset{soa, set("www.example.com.", "AAAA", 300, "2001:db8::1")},
			[]rrset{soa, www}, []rrset{del("www.example.com.", "AAAA"), replace(www)}},
		{"A to CNAME: the A deleted first", []rrset{soa, www},
			[]rrset{soa, set("www.example.com.", "CNAME", 300, "example.com.")},
			[]rrset{del("www.example.com.", "A"), replace(set("www.example.com.", "CNAME", 300, "example.com."))}},
		{"deletes first", []rrset{oldSOA, www}, []rrset{soa}, []rrset{del("www.example.com.", "A"), replace(soa)}},
		{"RRset gone, apex NS gone", []rrset{soa, set("example.com.", "NS", 3600, "ns1.berth.test."), www},
			[]rrset{soa}, []rrset{del("example.com.", "NS"), del("www.example.com.", "A")}},
		{"PowerDNS has nothing", nil, []rrset{soa, www}, []rrset{replace(soa), replace(www)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := diff(tc.have, tc.want); !reflect.DeepEqual(got, tc.patch) {
				t.Errorf("diff:\n got %+v\nwant %+v", got, tc.patch)
			}
		})
	}
}

func TestWantRRsets(t *testing.T) {
	t.Parallel()
	z := nameserver.Zone{
		Name: "example.com", Serial: 42, TTL: 3600, Nameservers: []string{"NS1.berth.test", "ns2.berth.test."},
		RRsets: []nameserver.RRset{
			{Name: "www.example.com", Type: "a", Values: []string{"192.0.2.1"}},
			{Name: "*.example.com", Type: "TXT", TTL: 60, Values: []string{`"x"`}},
			{Name: "empty.example.com", Type: "A", TTL: 60},
		},
	}
	wantSets := []rrset{
		set("example.com.", "SOA", 3600, "ns1.berth.test. hostmaster.example.com. 42 10800 3600 1209600 300"),
		set("example.com.", "NS", 3600, "ns1.berth.test.", "ns2.berth.test."),
		set("www.example.com.", "A", 3600, "192.0.2.1"),
		set("*.example.com.", "TXT", 60, `"x"`),
	}
	if got := wantRRsets(z); !reflect.DeepEqual(got, wantSets) {
		t.Errorf("wantRRsets:\n got %+v\nwant %+v", got, wantSets)
	}
	// No nameservers: the SOA's MNAME is the zone, and there is no apex NS.
	z.Nameservers, z.RRsets = nil, nil
	wantSets = []rrset{set("example.com.", "SOA", 3600, "example.com. hostmaster.example.com. 42 10800 3600 1209600 300")}
	if got := wantRRsets(z); !reflect.DeepEqual(got, wantSets) {
		t.Errorf("wantRRsets without nameservers:\n got %+v\nwant %+v", got, wantSets)
	}
}

func TestRetryable(t *testing.T) {
	t.Parallel()
	for status, retry := range map[int]bool{
		http.StatusInternalServerError: true, http.StatusBadGateway: true, http.StatusServiceUnavailable: true,
		http.StatusTooManyRequests: true, http.StatusUnauthorized: false, http.StatusNotFound: false,
		http.StatusConflict: false, http.StatusUnprocessableEntity: false,
	} {
		err := error(&APIError{Method: "PATCH", Path: "/zones/example.com.", Status: status, Message: "x"})
		if errors.Is(err, ErrRetryable) != retry {
			t.Errorf("%d: retryable %v, want %v", status, !retry, retry)
		}
	}
	if !errors.Is(&netError{errors.New("connection refused")}, ErrRetryable) {
		t.Error("a network error is not retryable")
	}
}

// An empty zone name would be the root zone: refused before anything is sent.
func TestNoRootZone(t *testing.T) {
	t.Parallel()
	c, err := New(Options{URL: "http://127.0.0.1:1", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"", "."} {
		if err := c.Publish(t.Context(), nameserver.Zone{Name: name, Serial: 1, TTL: 60}); err == nil ||
			errors.Is(err, ErrRetryable) {
			t.Errorf("Publish %q: %v; want an error, not retryable", name, err)
		}
		if err := c.Withdraw(t.Context(), name); err == nil || errors.Is(err, ErrRetryable) {
			t.Errorf("Withdraw %q: %v; want an error, not retryable", name, err)
		}
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	t.Parallel()
	for _, o := range []Options{
		{URL: "", APIKey: "k"}, {URL: "127.0.0.1:8081", APIKey: "k"}, {URL: "ftp://h", APIKey: "k"},
		{URL: "http://127.0.0.1:8081"},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) took it", o)
		}
	}
}

func TestToPowerDNS(t *testing.T) {
	t.Parallel()
	in := []rrset{
		set("a.example.com.", "AAAA", 60, "::ffff:192.0.2.1", "2001:db8::1", "::ffff:0.0.0.0", "::ffff:255.255.255.255"),
		set("b.example.com.", "TXT", 60, `"::ffff:192.0.2.1"`),
		del("c.example.com.", "AAAA"),
	}
	want := []rrset{
		set("a.example.com.", "AAAA", 60, "::ffff:c000:201", "2001:db8::1", "::ffff:0:0", "::ffff:ffff:ffff"),
		set("b.example.com.", "TXT", 60, `"::ffff:192.0.2.1"`),
		del("c.example.com.", "AAAA"),
	}
	if got := toPowerDNS(in); !reflect.DeepEqual(got, want) {
		t.Errorf("toPowerDNS:\n got %+v\nwant %+v", got, want)
	}
	if in[0].Records[0].Content != "::ffff:192.0.2.1" {
		t.Error("toPowerDNS changed its argument")
	}
}
