package webui_test

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/testenv"
)

// The Domains pages (docs/api.md, Domains) and a server's reverse DNS through the
// real console.

var domainIDRE = regexp.MustCompile(`^/domains/(\d+)$`)

// addDomain adds a zone through the form and answers its page's path.
func addDomain(t *testing.T, v *visitor, form url.Values) string {
	t.Helper()
	v.get("/domains")
	p := v.post("/domains", form)
	if p.status != http.StatusSeeOther || !domainIDRE.MatchString(p.location) {
		t.Fatalf("add: %d → %q; body: %.1500s", p.status, p.location, p.body)
	}
	return p.location
}

// upload posts a zone file as a multipart form's file, as a browser sends one.
func upload(t *testing.T, v *visitor, path, text string) page {
	t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	_ = w.WriteField("csrf", v.csrf)
	_ = w.WriteField("zone_file", "")
	f, err := w.CreateFormFile("zone_file_upload", "example.com.zone")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.WriteString(f, text)
	_ = w.Close()
	req, _ := http.NewRequest("POST", v.env.Root+path, &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	return v.do(req)
}

// TestConsoleDomains walks a zone's life through the pages: added with a zone file,
// listed with the nameservers to delegate to, an RRset set (a comment kept), edited
// in the editor, its TTL changed, its zone file downloaded and imported (uploaded),
// an RRset deleted after its confirmation page, its activity linked to it, and the
// zone deleted after the confirmation page.
func TestConsoleDomains(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, _ := signedIn(t, env, "en")
	p := v.get("/domains")
	wantStatus(t, p, http.StatusOK)
	wantText(t, p, `<a href="/domains" aria-current="page">Domains</a>`, "No domains yet.",
		"ns1.berth.localhost", "ns2.berth.localhost")

	path := addDomain(t, v, url.Values{"name": {"Example.COM"}, "ttl": {""}, "zone_file": {"www 300 IN A 192.0.2.1\n"}})
	p = v.get(path)
	wantText(t, v.follow(v.post("/domains", url.Values{"name": {"example.org"}})), "Domain example.org was added.")
	p = v.get(path)
	wantText(t, p, "<h1 class=\"mono\">example.com</h1>", `data-rrset="@ SOA" data-read-only`, `data-rrset="@ NS" data-read-only`,
		`data-rrset="www A"`, "192.0.2.1", "ns1.berth.localhost.")
	wantText(t, v.get("/domains"), `<a href="`+path+`">example.com</a>`, `data-rrsets="3"`)

	p = v.follow(v.post(path+"/rrsets", url.Values{"name": {"mail"}, "type": {"MX"}, "ttl": {""}, "records": {"10 mail ; primary\n\n20 backup\n"}}))
	wantText(t, p, "Records mail MX were saved.", `data-rrset="mail MX"`, "10 mail.example.com.", "; primary", "20 backup.example.com.")
	wantText(t, v.get(path+"?name=mail&type=MX"), `<option value="MX" selected>MX</option>`, `value="mail"`,
		"10 mail.example.com. ; primary\n20 backup.example.com.</textarea>")

	p = v.follow(v.post(path+"/ttl", url.Values{"ttl": {"600"}}))
	wantText(t, p, "Saved.", "<dd>600</dd>", "zone's (600)")

	resp := zoneFileResponse(t, v, path)
	wantText(t, resp, "$ORIGIN example.com.", "$TTL 600", "mail", "backup.example.com.")

	p = upload(t, v, path+"/zone-file", "www IN A 192.0.2.9\ntxt IN TXT \"hello\"\n")
	wantText(t, v.follow(p), "The zone file was imported.", `data-rrset="txt TXT"`, "192.0.2.9")
	if strings.Contains(v.get(path).body, `data-rrset="mail MX"`) {
		t.Error("the import kept an RRset the file does not have")
	}

	wantText(t, v.get(path+"/rrsets/txt/TXT/delete"), `Delete the records txt TXT of example.com?`, `"hello"`)
	wantText(t, v.get(path+"/rrsets/@/SOA/delete"), "set by the provider: they cannot be deleted")
	p = v.follow(v.post(path+"/rrsets/txt/TXT/delete", nil))
	wantText(t, p, "Records txt TXT were deleted.")

	id := domainIDRE.FindStringSubmatch(path)[1]
	p = v.get(path)
	wantText(t, p, `href="/activity?resource=domain%3A`+id+`"`)
	p = v.get("/activity?resource=domain:" + id)
	wantText(t, p, "Records txt TXT of domain example.com were deleted.", `<a href="`+path+`">example.com</a>`)

	wantText(t, v.get(path+"/delete"), "Delete example.com with all its records?")
	p = v.follow(v.post(path+"/delete", nil))
	wantText(t, p, "Domain example.com was deleted.")
	wantStatus(t, v.get(path), http.StatusNotFound)
}

// zoneFileResponse downloads a zone's file and checks that it comes as a text/plain
// attachment.
func zoneFileResponse(t *testing.T, v *visitor, path string) page {
	t.Helper()
	resp, err := v.c.Get(v.env.Root + path + "/zone-file")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if ct, cd := resp.Header.Get("Content-Type"), resp.Header.Get("Content-Disposition"); resp.StatusCode != 200 ||
		ct != "text/plain; charset=utf-8" || cd != `attachment; filename="example.com.zone"` {
		t.Fatalf("zone file: %d %q %q", resp.StatusCode, ct, cd)
	}
	return page{status: resp.StatusCode, body: string(b)}
}

// TestConsoleDomainRefusals: what the rules refuse is said on its field in the
// account's language (the records' messages naming the record, a zone file's by
// line), and nothing changes.
func TestConsoleDomainRefusals(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, _ := signedIn(t, env, "en")
	path := addDomain(t, v, url.Values{"name": {"example.com"}})

	p := v.post(path+"/rrsets", url.Values{"name": {"www"}, "type": {"A"}, "records": {"192.0.2.1\nnot-an-ip ; typo"}})
	wantStatus(t, p, http.StatusUnprocessableEntity)
	wantText(t, p, "192.0.2.1\nnot-an-ip ; typo</textarea>")
	fieldAfter(t, p, `id="rrset_records"`, "Record 2 (not-an-ip) is not a valid A value")
	p = v.post(path+"/rrsets", url.Values{"name": {"www.example.org."}, "type": {"A"}, "records": {"192.0.2.1"}})
	wantStatus(t, p, http.StatusUnprocessableEntity)
	fieldAfter(t, p, `id="rrset_name"`, "www.example.org lies outside the zone example.com")
	p = v.post(path+"/rrsets", url.Values{"name": {"@"}, "type": {"CNAME"}, "ttl": {"5"}, "records": {"other.example.org."}})
	wantStatus(t, p, http.StatusUnprocessableEntity)
	fieldAfter(t, p, `id="rrset_ttl"`, "Must be null (the zone's TTL) or between 60 and 86400 seconds.")
	if strings.Contains(v.get(path).body, `data-rrset="www A"`) {
		t.Error("a refused RRset was saved")
	}

	p = v.post(path+"/ttl", url.Values{"ttl": {"59"}})
	wantStatus(t, p, http.StatusUnprocessableEntity)
	fieldAfter(t, p, `id="zone_ttl"`, "Must be between 60 and 86400 seconds.")

	p = v.post(path+"/zone-file", url.Values{"zone_file": {"www IN A 192.0.2.1\nwww IN A nope\nmx IN MX 10\n"}})
	wantStatus(t, p, http.StatusUnprocessableEntity)
	wantText(t, p, "<li>Line 2: ", "<li>Line 3: ", "www IN A nope")
	if strings.Contains(v.get(path).body, `data-rrset="www A"`) {
		t.Error("a refused zone file changed the zone")
	}

	for _, c := range []struct{ lang, name, file, want string }{
		{"de", "com", "x IN A 1\n", "com ist ein öffentliches Suffix"},
		{"fr", "example.com", "", "example.com ne peut pas être ajouté ici"},
	} {
		w, _ := signedIn(t, env, c.lang)
		w.get("/domains")
		p := w.post("/domains", url.Values{"name": {c.name}, "zone_file": {c.file}})
		wantStatus(t, p, http.StatusUnprocessableEntity)
		wantText(t, p, `lang="`+c.lang+`"`, `value="`+c.name+`"`, c.file+"</textarea>")
		fieldAfter(t, p, `id="domain_name"`, c.want)
	}
	w, _ := signedIn(t, env, "de")
	w.get("/domains")
	p = w.post("/domains", url.Values{"name": {"example.net"}, "zone_file": {"www IN A 192.0.2.1\nwww IN AAAA nope\n"}})
	wantStatus(t, p, http.StatusUnprocessableEntity)
	wantText(t, p, `<span class="field-error">Zeile 2: `)
}

// TestConsoleDomainsOfAnotherAccount: another account's zone is not found on any
// page or form, and forms without the CSRF token are refused.
func TestConsoleDomainsOfAnotherAccount(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	owner, _ := signedIn(t, env, "en")
	path := addDomain(t, owner, url.Values{"name": {"example.com"}, "zone_file": {"www IN A 192.0.2.1\n"}})

	other, _ := signedIn(t, env, "de")
	other.get("/domains")
	for _, get := range []string{"", "/delete", "/zone-file", "/rrsets/www/A/delete"} {
		wantStatus(t, other.get(path+get), http.StatusNotFound)
	}
	for _, post := range []string{"/delete", "/ttl", "/rrsets", "/zone-file", "/rrsets/www/A/delete"} {
		wantStatus(t, other.post(path+post, url.Values{"ttl": {"600"}, "name": {"www"}, "type": {"A"}, "records": {"192.0.2.2"}}),
			http.StatusNotFound)
	}
	wantStatus(t, owner.post(path+"/delete", url.Values{"csrf": {"forged"}}), http.StatusForbidden)
	wantStatus(t, owner.post(path+"/rrsets/www/A/delete", url.Values{"csrf": {"forged"}}), http.StatusForbidden)
	wantText(t, owner.get(path), `data-rrset="www A"`, "192.0.2.1")
}

// TestConsoleDomainPagesInEveryLanguage: each page of a zone renders in English,
// German and French, with no message id left untranslated.
func TestConsoleDomainPagesInEveryLanguage(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	for _, c := range []struct{ lang, want string }{{"en", "Set an RRset"}, {"de", "RRset setzen"}, {"fr", "Définir un RRset"}} {
		v, a := signedIn(t, env, c.lang)
		path := addDomain(t, v, url.Values{"name": {fmt.Sprintf("zone%d.example", a.ID)}, "zone_file": {"www IN A 192.0.2.1\n"}})
		for _, sub := range []string{"/domains", path, path + "/delete", path + "/rrsets/www/A/delete", path + "/rrsets/@/SOA/delete"} {
			p := v.get(sub)
			wantStatus(t, p, http.StatusOK)
			wantText(t, p, `lang="`+c.lang+`"`)
			if body := strings.NewReplacer("/static/console.css", "", "/static/console.js", "").Replace(p.body); strings.Contains(body, "console.") || strings.Contains(body, "validation.") {
				t.Errorf("%s %s shows a message id: %.3000s", c.lang, sub, p.body)
			}
		}
		wantText(t, v.get(path), c.want)
	}
}

// TestConsoleRDNS: a server's page lists its PTRs, sets one and resets it to the
// default name; an address that is not the server's is refused in the account's
// language.
func TestConsoleRDNS(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, a := signedIn(t, env, "en")
	token, _ := apiToken(t, env, a.ID)
	sid := orderedServer(t, env, token, "web-1", 1)
	srv := env.Do(token, "GET", "/servers/"+sid, nil, nil).Want(t, 200).Map(t)["data"].(map[string]any)
	ip, name := srv["ipv4"].(string), srv["name"].(string)
	path := "/servers/" + sid

	p := v.get(path)
	wantText(t, p, "Reverse DNS", `<tr data-ptr="`+ip+`">`, name+".berth.localhost", `value="`+ip+`"`)
	p = v.follow(v.post(path+"/rdns", url.Values{"ip": {ip}, "ptr": {"mail.example.com"}}))
	wantText(t, p, "The reverse DNS was saved.", `class="mono">mail.example.com</td>`)
	p = v.follow(v.post(path+"/rdns", url.Values{"ip": {"198.51.100.77"}, "ptr": {"x.example.com"}}))
	wantText(t, p, "198.51.100.77 is not an address of this server")
	p = v.follow(v.post(path+"/rdns", url.Values{"ip": {ip}, "reset": {"1"}}))
	wantText(t, p, "The reverse DNS was saved.", name+".berth.localhost")
	if strings.Contains(p.body, `class="mono">mail.example.com</td>`) {
		t.Error("the reset kept the PTR")
	}
	wantText(t, v.get("/activity"), "The reverse DNS of "+ip+" on server web-1 is now mail.example.com.")

	other, b := signedIn(t, env, "fr")
	other.get("/servers")
	wantStatus(t, other.post(path+"/rdns", url.Values{"ip": {ip}, "ptr": {"evil.example.com"}}), http.StatusNotFound)
	wantText(t, v.get(path), `class="mono">`+name+".berth.localhost</td>")

	// In French: the section, and a name that is no host name refused in words.
	btoken, _ := apiToken(t, env, b.ID)
	own := "/servers/" + orderedServer(t, env, btoken, "web-fr", 1)
	wantText(t, other.get(own), "DNS inverse", "Nom (PTR)", "Revenir au nom par défaut")
	p = other.follow(other.post(own+"/rdns", url.Values{"ip": {"192.0.2.1"}, "ptr": {"x"}}))
	wantText(t, p, `lang="fr"`, "192.0.2.1 n’est pas une adresse de ce serveur")
}

// TestConsoleZoneFileLimits: a zone file of nearly 256 KiB is imported from the text
// area although URL-encoding makes its form larger than other forms may be; a file
// over 256 KiB, a file that is not UTF-8 and a form over the zone file forms' cap are
// refused, and nothing changes.
func TestConsoleZoneFileLimits(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, _ := signedIn(t, env, "en")
	path := addDomain(t, v, url.Values{"name": {"example.com"}})

	var big strings.Builder
	for i := 0; big.Len() < 250<<10; i++ {
		fmt.Fprintf(&big, "n%d IN TXT \"%s\"\n", i, strings.Repeat("k=v&", 60))
	}
	if enc := len(url.Values{"zone_file": {big.String()}}.Encode()); enc <= 256<<10 {
		t.Fatalf("the form is %d bytes encoded: no larger than other forms may be", enc)
	}
	p := v.post(path+"/zone-file", url.Values{"zone_file": {big.String()}})
	wantText(t, v.follow(p), "The zone file was imported.", `data-rrset="n0 TXT"`)

	tooBig := "; " + strings.Repeat("x", 256<<10) + "\n"
	p = upload(t, v, path+"/zone-file", tooBig)
	wantStatus(t, p, http.StatusUnprocessableEntity)
	wantText(t, p, "A zone file is at most 262144 bytes.")
	p = upload(t, v, path+"/zone-file", "www IN TXT \"\xff\"\n")
	wantStatus(t, p, http.StatusUnprocessableEntity)
	wantText(t, p, "not valid UTF-8")
	p = v.post(path+"/zone-file", url.Values{"zone_file": {strings.Repeat("=", 300<<10)}})
	wantStatus(t, p, http.StatusUnprocessableEntity)
	wantText(t, p, "The request body")
	wantText(t, v.get(path), `data-rrset="n0 TXT"`)
	if strings.Contains(v.get(path).body, `data-rrset="www TXT"`) {
		t.Error("a refused file changed the zone")
	}
}

// TestConsoleZonePages: a zone of more RRsets than a page holds is shown a page at a
// time (100 RRsets), with a pager that keeps the filter; the filter finds RRsets by a
// part of their names (a name written whole too) and by type; the editor's links keep
// the page; a page past the last shows the last; a page or type that cannot be is
// refused, naming what is wrong.
func TestConsoleZonePages(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, _ := signedIn(t, env, "en")
	path := addDomain(t, v, url.Values{"name": {"example.com"}})
	var file strings.Builder
	for i := range 250 {
		fmt.Fprintf(&file, "h%03d IN A 192.0.2.%d\n", i, i%250+1)
	}
	fmt.Fprintf(&file, "mail IN MX 10 h001\n")
	wantStatus(t, v.follow(upload(t, v, path+"/zone-file", file.String())), http.StatusOK)
	// 253 RRsets with the SOA and the apex NS, in DNS order: @ SOA, @ NS, h000 … h249, mail MX.
	rows := func(p page) []string {
		t.Helper()
		var names []string
		for _, m := range regexp.MustCompile(`data-rrset="([^"]+)"`).FindAllStringSubmatch(p.body, -1) {
			names = append(names, m[1])
		}
		return names
	}
	p := v.get(path)
	if got := rows(p); len(got) != 100 || got[0] != "@ SOA" || got[1] != "@ NS" || got[99] != "h097 A" {
		t.Fatalf("page 1: %d RRsets, %q … %q", len(got), got[:min(2, len(got))], got[len(got)-1:])
	}
	wantText(t, p, "Page 1 of 3", `href="/domains/`, `?page=2#rrsets" rel="next">Next →</a>`)
	if strings.Contains(p.body, `rel="prev"`) || strings.Contains(p.body, "data-rrset-matched") {
		t.Error("page 1 links to a page before it, or says it is filtered")
	}
	p = v.get(path + "?page=3")
	if got := rows(p); len(got) != 53 || got[0] != "h198 A" || got[52] != "mail MX" {
		t.Fatalf("page 3: %d RRsets, %q", len(got), got)
	}
	wantText(t, p, "Page 3 of 3", `?page=2#rrsets" rel="prev">← Previous</a>`,
		// The editor opens with the page kept.
		`href="`+path+`?name=h200&page=3&type=A#editor"`)
	if strings.Contains(p.body, `rel="next"`) {
		t.Error("the last page links to one after it")
	}
	p = v.get(path + "?name=h200&page=3&type=A")
	wantText(t, p, "Page 3 of 3", `value="h200"`, "192.0.2.201</textarea>")
	if got := rows(v.get(path + "?page=9")); len(got) != 53 || got[0] != "h198 A" {
		t.Errorf("page 9 of 3: %d RRsets, want the last page's 53", len(got))
	}

	for _, c := range []struct {
		query string
		want  []string
	}{
		{"search=H01", []string{"h010 A", "h011 A", "h012 A", "h013 A", "h014 A", "h015 A", "h016 A", "h017 A", "h018 A", "h019 A"}},
		{"search=h010.example.com.", []string{"h010 A"}},
		{"search=+example.com+", []string{"@ SOA", "@ NS"}},
		{"rrtype=mx", []string{"mail MX"}},
		{"search=h1&rrtype=MX", nil},
		{"rrtype=SOA", []string{"@ SOA"}},
	} {
		p := v.get(path + "?" + c.query)
		wantStatus(t, p, http.StatusOK)
		if got := rows(p); strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: %q, want %q", c.query, got, c.want)
		}
		wantText(t, p, fmt.Sprintf(`%d of the zone's 253 RRsets match.`, len(c.want)))
		if len(c.want) == 0 {
			wantText(t, p, "No RRset matches.")
		}
		if strings.Contains(p.body, `class="pager"`) {
			t.Errorf("%s: a pager for one page", c.query)
		}
	}
	// A filter of more than a page: the pager keeps it.
	p = v.get(path + "?search=h&rrtype=A")
	wantText(t, p, "250 of the zone's 253 RRsets match.", "Page 1 of 3", `?page=2&rrtype=A&search=h#rrsets" rel="next"`,
		`<option value="A" selected>A</option>`, `value="h"`)

	for _, c := range []struct{ query, want string }{
		{"page=0", "Must be a whole number of at least 1."},
		{"page=-1", "Must be a whole number of at least 1."},
		{"page=9223372036854775808", "Must be a whole number of at least 1."},
		{"page=x", "Must be a whole number of at least 1."},
		{"rrtype=PTR", "The type PTR is not offered"},
	} {
		p := v.get(path + "?" + c.query)
		wantStatus(t, p, http.StatusUnprocessableEntity)
		wantText(t, p, c.want)
	}
}

// TestConsoleZoneOccluded: an RRset below a delegation says that it is not served
// (its delegation named), also when the type filter leaves the delegation's NS out;
// the delegation's NS, its glue and the rest of the zone say nothing.
func TestConsoleZoneOccluded(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, _ := signedIn(t, env, "en")
	path := addDomain(t, v, url.Values{"name": {"example.com"}})
	file := "sub IN NS ns1.sub.example.com.\nsub IN NS ns.example.net.\nns1.sub IN A 192.0.2.53\nsub IN A 192.0.2.1\n" +
		"www.sub IN TXT \"hidden\"\nwww IN A 192.0.2.2\n"
	wantStatus(t, v.follow(upload(t, v, path+"/zone-file", file)), http.StatusOK)
	row := func(p page, set string) string {
		t.Helper()
		m := regexp.MustCompile(`(?s)<tr data-rrset="` + regexp.QuoteMeta(set) + `".*?</tr>`).FindString(p.body)
		if m == "" {
			t.Fatalf("no row of %s", set)
		}
		return m
	}
	const note = "Not served: it lies below the delegation of sub, whose nameservers answer for it."
	for _, q := range []string{"", "?rrtype=A"} {
		p := v.get(path + q)
		wantStatus(t, p, http.StatusOK)
		for set, hidden := range map[string]bool{"sub A": true, "ns1.sub A": false, "www A": false} {
			if got := strings.Contains(html.UnescapeString(row(p, set)), note); got != hidden {
				t.Errorf("%s%s: the note shown %v, want %v", path, q, got, hidden)
			}
		}
		if q == "" {
			for set, hidden := range map[string]bool{"sub NS": false, "www.sub TXT": true} {
				if got := strings.Contains(html.UnescapeString(row(p, set)), note); got != hidden {
					t.Errorf("%s: the note shown %v, want %v", set, got, hidden)
				}
			}
		}
	}
}
