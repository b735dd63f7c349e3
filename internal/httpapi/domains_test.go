package httpapi_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/testenv"
)

// zoneName is a name for a zone no other test of the installation holds, nor a
// parent or child of it.
func zoneName() string { return uniqueName("zone") + ".example" }

func createDomain(t testing.TB, c caller, body map[string]any) map[string]any {
	t.Helper()
	return data(t, c.Do("POST", "/domains", body).Want(t, http.StatusCreated))
}

// rrsetKeys are the name/type of each RRset of a list, in its order.
func rrsetKeys(t testing.TB, r *testenv.Response) []string {
	t.Helper()
	var out []string
	for _, s := range items(t, r) {
		out = append(out, s["name"].(string)+" "+s["type"].(string))
	}
	return out
}

func recordValues(set map[string]any) []string {
	var out []string
	for _, r := range set["records"].([]any) {
		out = append(out, r.(map[string]any)["value"].(string))
	}
	return out
}

// TestDomains walks a zone's life through the API (docs/api.md, Domains): created
// from any spelling of its name with the operator's SOA and NS, found by id and by
// name, RRsets created, replaced, listed in DNS order with filters, read and
// deleted, each change raising the serial; a zone file exported and imported; the
// TTL changed; the zone deleted and its name free again.
func TestDomains(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "", "")
	name := zoneName()
	d := createDomain(t, a, map[string]any{"name": strings.ToUpper(name) + "."})
	id := itoa(num(t, d["id"]))
	today := time.Now().UTC().Format("20060102")
	if d["name"] != name || num(t, d["ttl"]) != 3600 || itoa(num(t, d["serial"])) != today+"01" || num(t, d["rrset_count"]) != 2 {
		t.Errorf("created zone: %v, want %s, ttl 3600, serial %s01, 2 RRsets", d, name, today)
	}
	if ns, _ := d["nameservers"].([]any); len(ns) != 2 || ns[0] != "ns1.berth.localhost" || ns[1] != "ns2.berth.localhost" {
		t.Errorf("nameservers %v, want the default ns1 and ns2 of berth.localhost", d["nameservers"])
	}
	for _, ref := range []string{id, name, strings.ToUpper(name) + "."} {
		if got := data(t, a.Do("GET", "/domains/"+ref, nil).Want(t, 200)); got["id"] != d["id"] {
			t.Errorf("GET /domains/%s: %v", ref, got)
		}
	}
	if got := ids(t, items(t, a.Do("GET", "/domains", nil).Want(t, 200))); !slices.Equal(got, []int64{num(t, d["id"])}) {
		t.Errorf("list: %v", got)
	}

	serial := num(t, d["serial"])
	put := func(path string, body map[string]any, status int) map[string]any {
		t.Helper()
		set := data(t, a.Do("PUT", "/domains/"+id+"/rrsets/"+path, body).Want(t, status))
		now := num(t, data(t, a.Do("GET", "/domains/"+id, nil).Want(t, 200))["serial"])
		if now <= serial {
			t.Errorf("PUT %s: serial %d, want above %d", path, now, serial)
		}
		serial = now
		return set
	}
	www := put("www/a", map[string]any{"records": []map[string]any{{"value": "192.0.2.1", "comment": "web"}}}, 201)
	if www["name"] != "www" || www["type"] != "A" || www["ttl"] != nil || !slices.Equal(recordValues(www), []string{"192.0.2.1"}) {
		t.Errorf("created RRset: %v", www)
	}
	www = put("www/A", map[string]any{"ttl": 300, "records": []map[string]any{{"value": "192.0.2.2"}, {"value": "192.0.2.1", "comment": "web"}}}, 200)
	if num(t, www["ttl"]) != 300 || !slices.Equal(recordValues(www), []string{"192.0.2.2", "192.0.2.1"}) {
		t.Errorf("replaced RRset: %v", www)
	}
	mx := put("@/MX", map[string]any{"records": []map[string]any{{"value": "10 mail"}}}, 201)
	if !slices.Equal(recordValues(mx), []string{"10 mail." + name + "."}) {
		t.Errorf("MX canonical: %v", mx)
	}
	put(name+"./TXT", map[string]any{"records": []map[string]any{{"value": "v=spf1 -all"}}}, 201)

	want := []string{"@ SOA", "@ NS", "@ MX", "@ TXT", "www A"}
	if got := rrsetKeys(t, a.Do("GET", "/domains/"+id+"/rrsets", nil).Want(t, 200)); !slices.Equal(got, want) {
		t.Errorf("RRsets %v, want %v", got, want)
	}
	if got := rrsetKeys(t, a.Do("GET", "/domains/"+id+"/rrsets?name=@", nil).Want(t, 200)); !slices.Equal(got, want[:4]) {
		t.Errorf("RRsets at the apex %v", got)
	}
	if got := rrsetKeys(t, a.Do("GET", "/domains/"+id+"/rrsets?type=a", nil).Want(t, 200)); !slices.Equal(got, []string{"www A"}) {
		t.Errorf("A RRsets %v", got)
	}
	if got := data(t, a.Do("GET", "/domains/"+id+"/rrsets/WWW."+name+"./a", nil).Want(t, 200)); got["name"] != "www" {
		t.Errorf("GET RRset by its absolute name: %v", got)
	}
	soa := data(t, a.Do("GET", "/domains/"+id+"/rrsets/@/SOA", nil).Want(t, 200))
	if v := recordValues(soa); len(v) != 1 || !strings.HasPrefix(v[0], "ns1.berth.localhost. hostmaster."+name+". "+itoa(serial)+" ") {
		t.Errorf("SOA %v", v)
	}
	if got := num(t, data(t, a.Do("GET", "/domains/"+id, nil).Want(t, 200))["rrset_count"]); got != 5 {
		t.Errorf("rrset_count %d, want 5", got)
	}

	export := a.Do("GET", "/domains/"+id+"/zone-file", nil).Want(t, 200)
	if ct := export.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("zone file Content-Type %q", ct)
	}
	text := string(export.Body)
	for _, line := range []string{"$ORIGIN " + name + ".", "www\t300\tIN\tA\t192.0.2.2", "www\t300\tIN\tA\t192.0.2.1 ; web", "@\t3600\tIN\tMX\t10 mail." + name + "."} {
		if !strings.Contains(text, line+"\n") {
			t.Errorf("zone file lacks %q:\n%s", line, text)
		}
	}
	// Importing the export changes no RRset; a file of one record replaces them all.
	imported := data(t, a.Do("PUT", "/domains/"+id+"/zone-file", text).Want(t, 200))
	if got := string(a.Do("GET", "/domains/"+id+"/zone-file", nil).Want(t, 200).Body); strings.Replace(got, itoa(num(t, imported["serial"])), itoa(serial), 1) != text {
		t.Errorf("export after importing the export:\n%s\nwant\n%s", got, text)
	}
	imported = data(t, a.Do("PUT", "/domains/"+id+"/zone-file", "api 600 IN AAAA 2001:DB8::1\n").Want(t, 200))
	if num(t, imported["rrset_count"]) != 3 {
		t.Errorf("after importing one RRset: %v", imported)
	}
	if got := rrsetKeys(t, a.Do("GET", "/domains/"+id+"/rrsets", nil).Want(t, 200)); !slices.Equal(got, []string{"@ SOA", "@ NS", "api AAAA"}) {
		t.Errorf("RRsets after import %v", got)
	}

	a.Do("DELETE", "/domains/"+id+"/rrsets/api/AAAA", nil).Want(t, http.StatusNoContent)
	wantNotFound(t, a.Do("DELETE", "/domains/"+id+"/rrsets/api/AAAA", nil))
	wantNotFound(t, a.Do("GET", "/domains/"+id+"/rrsets/api/AAAA", nil))

	patched := data(t, a.Do("PATCH", "/domains/"+name, map[string]any{"ttl": 86400}).Want(t, 200))
	if num(t, patched["ttl"]) != 86400 || num(t, patched["serial"]) <= num(t, imported["serial"]) {
		t.Errorf("PATCH ttl: %v", patched)
	}

	a.Do("DELETE", "/domains/"+name, nil).Want(t, http.StatusNoContent)
	wantNotFound(t, a.Do("GET", "/domains/"+id, nil))
	wantNotFound(t, a.Do("DELETE", "/domains/"+id, nil))
	// The name is free again, for any account.
	createDomain(t, env.NewAccount("en", "", ""), map[string]any{"name": name})
}

// TestDomainRefusals: every rule of a zone and an RRset is a 422 on its field
// (docs/api.md, Domains), in the account's language, and changes nothing.
func TestDomainRefusals(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("de", "", "")
	other := env.NewAccount("en", "", "")
	held, child := zoneName(), "deep."+zoneName()
	createDomain(t, other, map[string]any{"name": held})
	createDomain(t, other, map[string]any{"name": child})

	for _, c := range []struct {
		body  any
		field string
	}{
		{map[string]any{}, "name"},
		{map[string]any{"name": nil}, "name"},
		{map[string]any{"name": ""}, "name"},
		{map[string]any{"name": "com"}, "name"},
		{map[string]any{"name": "co.uk"}, "name"},
		{map[string]any{"name": "192.0.2.1"}, "name"},
		{map[string]any{"name": held}, "name"},
		{map[string]any{"name": "sub." + held}, "name"},
		{map[string]any{"name": strings.TrimPrefix(child, "deep.")}, "name"}, // a parent of a zone held
		{map[string]any{"name": zoneName(), "ttl": 59}, "ttl"},
		{map[string]any{"name": zoneName(), "ttl": 86401}, "ttl"},
		{map[string]any{"name": zoneName(), "ttl": -1}, "ttl"},
		{map[string]any{"name": zoneName(), "ttl": 0}, "ttl"},
		{map[string]any{"name": zoneName(), "ttl": int64(1) << 62}, "ttl"},
		{map[string]any{"name": zoneName(), "zone_file": "www IN A 300.1.1.1\n"}, "line 1"},
		{map[string]any{"name": zoneName(), "zone_file": "\n\nwww IN CNAME a\nwww IN A 192.0.2.1\n"}, "line 3"},
		{map[string]any{"name": zoneName(), "extra": 1}, "extra"},
		// The operator's: the default domain (berth.localhost), above or below it, and
		// the reverse trees.
		{map[string]any{"name": "berth.localhost"}, "name"},
		{map[string]any{"name": "web-1.berth.localhost"}, "name"},
		{map[string]any{"name": "2.0.192.in-addr.arpa"}, "name"},
		{map[string]any{"name": "8.b.d.0.1.0.0.2.ip6.arpa"}, "name"},
	} {
		wantInvalid(t, a.Do("POST", "/domains", c.body), c.field)
	}
	// A taken name is refused in the account's language, naming no other account.
	e := wantInvalid(t, a.Do("POST", "/domains", map[string]any{"name": "www." + held}), "name")
	if want := msg("de", "validation.zone_taken", "name", "www."+held); e.Errors["name"][0] != want {
		t.Errorf("taken: %q, want %q", e.Errors["name"][0], want)
	}
	// A zone's TTL is never null: its message does not offer null, as an RRset's does.
	e = wantInvalid(t, a.Do("POST", "/domains", map[string]any{"name": zoneName(), "ttl": 59}), "ttl")
	if want := msg("de", "validation.zone_ttl", "min", 60, "max", 86400); e.Errors["ttl"][0] != want {
		t.Errorf("zone ttl: %q, want %q", e.Errors["ttl"][0], want)
	}
	if got := items(t, a.Do("GET", "/domains", nil).Want(t, 200)); len(got) != 0 {
		t.Fatalf("refusals made zones: %v", got)
	}

	d := createDomain(t, a, map[string]any{"name": zoneName()})
	id := itoa(num(t, d["id"]))
	a.Do("PUT", "/domains/"+id+"/rrsets/www/A", map[string]any{"records": []map[string]any{{"value": "192.0.2.1"}}}).Want(t, 201)
	many := make([]map[string]any, 101)
	for i := range many {
		many[i] = map[string]any{"value": "192.0.2." + itoa(int64(i%250+1))}
	}
	for _, c := range []struct {
		path  string
		body  any
		field string
	}{
		{"@/SOA", map[string]any{"records": []map[string]any{{"value": "x"}}}, "type"},
		{"@/NS", map[string]any{"records": []map[string]any{{"value": "ns.example.net."}}}, "type"},
		{"@/PTR", map[string]any{"records": []map[string]any{{"value": "x."}}}, "type"},
		{"@/CNAME", map[string]any{"records": []map[string]any{{"value": "host.example.net."}}}, "name"},
		{"www/CNAME", map[string]any{"records": []map[string]any{{"value": "host.example.net."}}}, "name"},
		{"mail/A", map[string]any{"records": []map[string]any{}}, "records"},
		{"mail/A", map[string]any{}, "records"},
		{"mail/A", map[string]any{"records": many}, "records"},
		{"mail/A", map[string]any{"records": []map[string]any{{"value": "2001:db8::1"}}}, "records"},
		{"mail/A", map[string]any{"records": []map[string]any{{"comment": "no value"}}}, "records"},
		{"mail/A", map[string]any{"records": []map[string]any{{"value": "192.0.2.1"}, {"value": "192.0.2.1"}}}, "records"},
		{"mail/A", map[string]any{"ttl": 59, "records": []map[string]any{{"value": "192.0.2.1"}}}, "ttl"},
		{"mail/A", map[string]any{"ttl": int64(-1) << 62, "records": []map[string]any{{"value": "192.0.2.1"}}}, "ttl"},
		{"mail/MX", map[string]any{"records": []map[string]any{{"value": "mail"}}}, "records"},
		{"bad_label!/A", map[string]any{"records": []map[string]any{{"value": "192.0.2.1"}}}, "name"},
		{"mail/A", map[string]any{"records": []map[string]any{{"value": "192.0.2.1"}}, "extra": true}, "extra"},
	} {
		wantInvalid(t, a.Do("PUT", "/domains/"+id+"/rrsets/"+c.path, c.body), c.field)
	}
	wantInvalid(t, a.Do("DELETE", "/domains/"+id+"/rrsets/@/SOA", nil), "type")
	wantInvalid(t, a.Do("DELETE", "/domains/"+id+"/rrsets/@/NS", nil), "type")
	wantInvalid(t, a.Do("PATCH", "/domains/"+id, map[string]any{"ttl": 86401}), "ttl")
	wantInvalid(t, a.Do("PATCH", "/domains/"+id, map[string]any{}), "ttl")
	wantInvalid(t, a.Do("GET", "/domains/"+id+"/rrsets?type=PTR", nil), "type")
	wantInvalid(t, a.Do("GET", "/domains/"+id+"/rrsets?name=www.elsewhere.org.", nil), "name")
	wantInvalid(t, a.Do("GET", "/domains/"+id+"/rrsets?type=A&type=MX", nil), "type")
	// A name outside the zone names no RRset of it.
	wantNotFound(t, a.Do("PUT", "/domains/"+id+"/rrsets/www.elsewhere.org./A", map[string]any{"records": []map[string]any{{"value": "192.0.2.1"}}}))
	wantNotFound(t, a.Do("GET", "/domains/"+id+"/rrsets/www/PTR", nil))

	// Nothing refused was written.
	if got := rrsetKeys(t, a.Do("GET", "/domains/"+id+"/rrsets", nil).Want(t, 200)); !slices.Equal(got, []string{"@ SOA", "@ NS", "www A"}) {
		t.Errorf("RRsets after refusals: %v", got)
	}
	if got := data(t, a.Do("GET", "/domains/"+id, nil).Want(t, 200)); got["serial"] != d["serial"].(float64)+1 {
		t.Errorf("serial after one change and refusals: %v, want %v", got["serial"], d["serial"].(float64)+1)
	}
}

// TestZoneFileGarbage: 256 KiB of garbage answers 422 in well under a second,
// naming lines, and changes nothing; a larger body is refused on zone_file.
func TestZoneFileGarbage(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "", "")
	d := createDomain(t, a, map[string]any{"name": zoneName()})
	id := itoa(num(t, d["id"]))
	line := "}{ \"( ;\x01 IN IN A A 999.1 $INCLUDE /etc/passwd\n"
	garbage := strings.Repeat(line, 256<<10/len(line)+1)[:256<<10]
	start := time.Now()
	e := wantInvalid(t, a.Do("PUT", "/domains/"+id+"/zone-file", garbage), "line 1")
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("256 KiB of garbage took %s", took)
	}
	if len(e.Errors) != 101 || len(e.Errors["zone_file"]) != 1 {
		t.Errorf("%d error keys, want 100 lines and zone_file", len(e.Errors))
	}
	wantInvalid(t, a.Do("PUT", "/domains/"+id+"/zone-file", strings.Repeat("\n", 256<<10+1)), "zone_file")
	if got := data(t, a.Do("GET", "/domains/"+id, nil).Want(t, 200)); got["serial"] != d["serial"] {
		t.Errorf("a refused zone file changed the zone: %v", got)
	}
}

// TestDomainsApart: another account's zone is 404 on every route, by id and by
// name; a token without `domains` reads and changes nothing.
func TestDomainsApart(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "", "")
	b := env.NewAccount("en", "", "")
	name := zoneName()
	d := createDomain(t, a, map[string]any{"name": name})
	a.Do("PUT", "/domains/"+name+"/rrsets/www/A", map[string]any{"records": []map[string]any{{"value": "192.0.2.1"}}}).Want(t, 201)
	set := map[string]any{"records": []map[string]any{{"value": "192.0.2.9"}}}
	for _, ref := range []string{itoa(num(t, d["id"])), name} {
		wantNotFound(t, b.Do("GET", "/domains/"+ref, nil))
		wantNotFound(t, b.Do("PATCH", "/domains/"+ref, map[string]any{"ttl": 600}))
		wantNotFound(t, b.Do("DELETE", "/domains/"+ref, nil))
		wantNotFound(t, b.Do("GET", "/domains/"+ref+"/rrsets", nil))
		wantNotFound(t, b.Do("GET", "/domains/"+ref+"/rrsets/www/A", nil))
		wantNotFound(t, b.Do("PUT", "/domains/"+ref+"/rrsets/www/A", set))
		wantNotFound(t, b.Do("DELETE", "/domains/"+ref+"/rrsets/www/A", nil))
		wantNotFound(t, b.Do("GET", "/domains/"+ref+"/zone-file", nil))
		wantNotFound(t, b.Do("PUT", "/domains/"+ref+"/zone-file", "x 60 IN A 192.0.2.1\n"))
	}
	for _, ref := range []string{"0", "-1", "01", "9223372036854775807", "9223372036854775808", "a..b", "com", "%20"} {
		wantNotFound(t, a.Do("GET", "/domains/"+ref, nil))
	}
	reader := as(env, a, "read")
	data(t, reader.Do("GET", "/domains/"+name, nil).Want(t, 200))
	wantError(t, reader.Do("PUT", "/domains/"+name+"/rrsets/www/A", set), http.StatusForbidden, "missing_scope")
	wantError(t, reader.Do("POST", "/domains", map[string]any{"name": zoneName()}), http.StatusForbidden, "missing_scope")
	wantError(t, reader.Do("DELETE", "/domains/"+name, nil), http.StatusForbidden, "missing_scope")
	if got := recordValues(data(t, a.Do("GET", "/domains/"+name+"/rrsets/www/A", nil).Want(t, 200))); !slices.Equal(got, []string{"192.0.2.1"}) {
		t.Errorf("www A after refused changes: %v", got)
	}
}

// TestDomainEvents: each change of a zone writes its event with the request's id
// (docs/api.md, Events), about the zone.
func TestDomainEvents(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "", "")
	name := zoneName()
	d := createDomain(t, a, map[string]any{"name": name})
	id := itoa(num(t, d["id"]))
	set := map[string]any{"records": []map[string]any{{"value": "192.0.2.1"}}}
	a.Do("PUT", "/domains/"+id+"/rrsets/www/A", set).Want(t, 201)
	a.Do("PUT", "/domains/"+id+"/rrsets/www/A", set).Want(t, 200)
	a.Do("DELETE", "/domains/"+id+"/rrsets/www/A", nil).Want(t, 204)
	a.Do("PUT", "/domains/"+id+"/zone-file", "x 60 IN A 192.0.2.1\n").Want(t, 200)
	a.Do("PATCH", "/domains/"+id, map[string]any{"ttl": 600}).Want(t, 200)
	wantInvalid(t, a.Do("PUT", "/domains/"+id+"/rrsets/@/CNAME", set), "name")
	a.Do("DELETE", "/domains/"+id, nil).Want(t, 204)

	l := events(t, a, "?resource=domain:"+id)
	want := []string{"domain.created", "rrset.created", "rrset.updated", "rrset.deleted", "domain.updated", "domain.updated", "domain.deleted"}
	if got := eventTypes(l); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	for _, e := range l.Data {
		if e.RequestID == nil || *e.RequestID == "" {
			t.Errorf("%s without its request id", e.Type)
		}
	}
	if got := events(t, a, "?types=domain.*,rrset.*"); len(got.Data) != len(want) {
		t.Errorf("filtered by type: %v", eventTypes(got))
	}
}

// TestRDNS: a server's addresses have the default PTR until one is set; a PTR is set
// for its IPv4 address or any address of its IPv6 /64, back to the default with
// null, each change an rdns.updated event; another address, a name that is no host
// name and another account's server are refused (docs/api.md, Reverse DNS).
func TestRDNS(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "100", "")
	srv := runningServer(t, a)
	name, v4, v6 := srv["name"].(string), srv["ipv4"].(string), srv["ipv6"].(string)
	rdns := func() []map[string]any { return items(t, a.Do("GET", "/servers/"+name+"/rdns", nil).Want(t, 200)) }
	if got := rdns(); len(got) != 1 || got[0]["ip"] != v4 || got[0]["ptr"] != name+".berth.localhost" {
		t.Fatalf("default rdns: %v", got)
	}
	set := func(ip string, ptr any) []map[string]any {
		t.Helper()
		return items(t, a.Do("PUT", "/servers/"+name+"/rdns", map[string]any{"ip": ip, "ptr": ptr}).Want(t, 200))
	}
	set(v4, "Mail.Example.COM.")
	other6 := strings.TrimSuffix(v6, "::1") + "::beef"
	got := set(strings.ToUpper(other6), "www.example.com")
	if len(got) != 2 || got[0]["ip"] != v4 || got[0]["ptr"] != "mail.example.com" || got[1]["ip"] != other6 || got[1]["ptr"] != "www.example.com" {
		t.Errorf("after two PUTs: %v", got)
	}
	if got := set(other6, nil); len(got) != 1 {
		t.Errorf("after resetting the IPv6 PTR: %v", got)
	}
	if got := set(v4, nil); got[0]["ptr"] != name+".berth.localhost" {
		t.Errorf("after resetting the IPv4 PTR: %v", got)
	}

	for _, c := range []struct {
		body  any
		field string
	}{
		{map[string]any{"ptr": "x.example.com"}, "ip"},
		{map[string]any{"ip": v4}, "ptr"},
		{map[string]any{"ip": "192.0.2.254", "ptr": "x.example.com"}, "ip"},
		{map[string]any{"ip": "2001:db8:ffff::1", "ptr": "x.example.com"}, "ip"},
		{map[string]any{"ip": "::ffff:" + v4, "ptr": "x.example.com"}, "ip"},
		{map[string]any{"ip": "not an address", "ptr": "x.example.com"}, "ip"},
		{map[string]any{"ip": v4, "ptr": "bad name!"}, "ptr"},
		{map[string]any{"ip": v4, "ptr": ""}, "ptr"},
		{map[string]any{"ip": v4, "ptr": 7}, "ptr"},
		{map[string]any{"ip": v4, "ptr": "x.example.com", "extra": 1}, "extra"},
	} {
		wantInvalid(t, a.Do("PUT", "/servers/"+name+"/rdns", c.body), c.field)
	}
	b := env.NewAccount("en", "", "")
	wantNotFound(t, b.Do("GET", "/servers/"+name+"/rdns", nil))
	wantNotFound(t, b.Do("PUT", "/servers/"+name+"/rdns", map[string]any{"ip": v4, "ptr": "x.example.com"}))
	wantError(t, as(env, a, "read").Do("PUT", "/servers/"+name+"/rdns", map[string]any{"ip": v4, "ptr": "x.example.com"}), http.StatusForbidden, "missing_scope")

	l := events(t, a, "?types=rdns.*")
	if got := eventTypes(l); len(got) != 4 {
		t.Fatalf("rdns events %v, want 4", got)
	}
	if e := l.Data[0]; e.Resource.Type != "server" || e.Resource.ID != num(t, srv["id"]) {
		t.Errorf("rdns event about %v", e.Resource)
	}
}
