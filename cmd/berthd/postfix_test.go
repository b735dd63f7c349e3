package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/http"
	"net/mail"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/testnet"
)

// Mail through a real mail server: Debian's postfix, set up by scripts/postfix-setup.sh
// to deliver the test domains berth.test and support.berth.test to one local Maildir
// and nothing anywhere else. .ci/run sets it up and requires these tests
// (BERTH_POSTFIX_REQUIRED=1); elsewhere they run where BERTH_POSTFIX_MAILDIR names the
// Maildir, and skip otherwise.

// postfixMaildir is the Maildir postfix delivers to, or the test is skipped.
func postfixMaildir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("BERTH_POSTFIX_MAILDIR")
	if dir == "" {
		if os.Getenv("BERTH_POSTFIX_REQUIRED") == "1" {
			t.Fatal("BERTH_POSTFIX_REQUIRED=1 but BERTH_POSTFIX_MAILDIR is not set: run scripts/postfix-setup.sh")
		}
		t.Skip("no postfix: BERTH_POSTFIX_MAILDIR is not set (scripts/postfix-setup.sh prints it)")
	}
	return dir
}

// delivered is a mail postfix delivered, parsed.
type delivered struct {
	file   string
	header mail.Header
	text   string // the text/plain part, decoded
	html   string // the text/html part, decoded
}

// waitMail waits for postfix to deliver a mail to rcpt (its X-Original-To), one not in
// seen, and returns it.
func waitMail(t *testing.T, maildir, rcpt string, seen map[string]bool, within time.Duration) delivered {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		files, _ := filepath.Glob(filepath.Join(maildir, "new", "*"))
		for _, f := range files {
			if seen[f] {
				continue
			}
			raw, err := os.ReadFile(f)
			if err != nil {
				continue // moved or still being written
			}
			m, err := mail.ReadMessage(bytes.NewReader(raw))
			if err != nil || !strings.EqualFold(m.Header.Get("X-Original-To"), rcpt) {
				continue
			}
			seen[f] = true
			return parseDelivered(t, f, m)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no mail to %s in %s within %s", rcpt, maildir, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func parseDelivered(t *testing.T, file string, m *mail.Message) delivered {
	t.Helper()
	d := delivered{file: file, header: m.Header}
	mt, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil {
		t.Fatalf("%s: Content-Type %q: %v", file, m.Header.Get("Content-Type"), err)
	}
	if !strings.HasPrefix(mt, "multipart/") {
		d.text = decodePart(t, m.Header.Get("Content-Transfer-Encoding"), m.Body)
		return d
	}
	r := multipart.NewReader(m.Body, params["boundary"])
	for {
		p, err := r.NextRawPart()
		if err == io.EOF {
			return d
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		body := decodePart(t, p.Header.Get("Content-Transfer-Encoding"), p)
		switch pt, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type")); pt {
		case "text/plain":
			d.text = body
		case "text/html":
			d.html = body
		}
	}
}

func decodePart(t *testing.T, cte string, r io.Reader) string {
	t.Helper()
	switch strings.ToLower(cte) {
	case "quoted-printable":
		r = quotedprintable.NewReader(r)
	case "base64":
		r = base64.NewDecoder(base64.StdEncoding, r)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// postfixBerth is a berthd serving with postfix as its SMTP server, and an account of
// its, at an address of its own in berth.test.
type postfixBerth struct {
	bin, data, addr string
	tag             string // random, in the addresses: the mails of this test
	rcpt, support   string // the account's address, --support-email
	account         any    // the account's id
}

// newPostfixBerth makes the account (in lang) and starts berthd.
func newPostfixBerth(t *testing.T, lang string) postfixBerth {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	tag := hex.EncodeToString(b[:])
	p := postfixBerth{bin: testenv.BerthdBinary(t), data: t.TempDir(), addr: testnet.FreeAddr(t), tag: tag,
		rcpt: "user-" + tag + "@berth.test", support: "support-" + tag + "@support.berth.test"}
	runJSON(t, p.bin, append([]string{"migrate"}, storeFlags(t, p.data)...)...)
	acct := runJSON(t, p.bin, append([]string{"admin", "account", "create", "--email", p.rcpt, "--name", "Jörg",
		"--password", "long-enough-pw", "--language", lang}, storeFlags(t, p.data)...)...)
	p.account = acct["id"]
	startServe(t, p.bin, p.data, p.addr, "1", "--smtp-url", "smtp://127.0.0.1:25", "--mail-from", "Berth <berth@berth.test>",
		"--support-email", p.support, "--public-url", "http://"+p.addr)
	return p
}

// TestPostfixPasswordReset: a password reset asked for on the console's form reaches a
// real mail server's mailbox: from --mail-from to the account's address, a subject in
// the account's language (RFC 2047 encoded where it is not ASCII), a Message-ID of
// Berth's, text and HTML, and a link on --public-url that opens the form to set a new
// password.
func TestPostfixPasswordReset(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	maildir := postfixMaildir(t)
	t.Parallel()
	p := newPostfixBerth(t, "de")
	rcpt, addr := p.rcpt, p.addr

	const pre = "0123456789abcdef0123456789abcdef"
	form := url.Values{"csrf": {pre}, "email": {rcpt}}
	req, _ := http.NewRequest("POST", "http://"+addr+"/password-reset", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Cookie", "berth_pre="+pre)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("reset request: %d", resp.StatusCode)
	}

	m := waitMail(t, maildir, rcpt, map[string]bool{}, 2*time.Minute)
	h := m.header
	if from, err := mail.ParseAddress(h.Get("From")); err != nil || from.Address != "berth@berth.test" {
		t.Errorf("From %q: %v", h.Get("From"), err)
	}
	if to, err := mail.ParseAddress(h.Get("To")); err != nil || to.Address != rcpt {
		t.Errorf("To %q: %v", h.Get("To"), err)
	}
	if got := h.Get("Content-Language"); got != "de" {
		t.Errorf("Content-Language %q, want de", got)
	}
	subject, err := new(mime.WordDecoder).DecodeHeader(h.Get("Subject"))
	if err != nil || subject == "" || strings.Contains(strings.ToLower(subject), "password") {
		t.Errorf("Subject %q (%v): want the German one", subject, err)
	}
	if id := h.Get("Message-Id"); !regexp.MustCompile(`^<[^<>@\s]+@[^<>@\s]+>$`).MatchString(id) {
		t.Errorf("Message-ID %q", id)
	}
	if h.Get("Date") == "" {
		t.Error("no Date")
	}
	if m.text == "" || m.html == "" {
		t.Fatalf("want text and HTML parts: text %q, html %q", m.text, m.html)
	}
	link := regexp.MustCompile(`http://` + regexp.QuoteMeta(addr) + `/password-reset/[A-Za-z0-9_-]+`).FindString(m.text)
	if link == "" {
		t.Fatalf("no reset link on the public URL in the text:\n%s", m.text)
	}
	if !strings.Contains(m.html, link) {
		t.Errorf("the HTML part lacks the link %s", link)
	}
	page, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(page.Body)
	page.Body.Close()
	if page.StatusCode != 200 || !strings.Contains(string(body), `type="password"`) {
		t.Errorf("the mailed link: %d, want the form to set a password:\n%s", page.StatusCode, body)
	}
}

// TestPostfixTicketThread: a ticket's mails through a real mail server: the new
// ticket (opened with the API) reaches --support-email, the root of its thread; the
// staff reply (berthd admin ticket reply) reaches the account holder in the account's
// language, in reply to that root and referring to it; the internal note (admin ticket
// note) reaches no one.
func TestPostfixTicketThread(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	maildir := postfixMaildir(t)
	t.Parallel()
	p := newPostfixBerth(t, "fr")
	bin, data, addr, tag, rcpt, support := p.bin, p.data, p.addr, p.tag, p.rcpt, p.support
	tok := runJSON(t, bin, append([]string{"admin", "token", "create", "--account", fmt.Sprint(p.account), "--name", "t",
		"--scopes", "read,tickets"}, storeFlags(t, data)...)...)

	body, _ := json.Marshal(map[string]any{"subject": "Plus de réseau " + tag, "body": "Le serveur ne répond plus."})
	req, _ := http.NewRequest("POST", "http://"+addr+"/v1/tickets", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok["token"].(string))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var created struct {
		Data struct {
			ID int64 `json:"id"`
		} `json:"data"`
	}
	err = json.NewDecoder(resp.Body).Decode(&created)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("POST /tickets: %d, %v", resp.StatusCode, err)
	}
	seen := map[string]bool{}
	opened := waitMail(t, maildir, support, seen, 2*time.Minute)
	root := opened.header.Get("Message-Id")
	if root == "" || opened.header.Get("In-Reply-To") != "" || !strings.Contains(opened.text, "Le serveur ne répond plus.") {
		t.Errorf("the new ticket's mail: Message-ID %q, In-Reply-To %q, text %q", root, opened.header.Get("In-Reply-To"), opened.text)
	}
	id := fmt.Sprint(created.Data.ID)
	runJSON(t, bin, append([]string{"admin", "ticket", "note", id, "--body", "secret-" + tag}, storeFlags(t, data)...)...)
	runJSON(t, bin, append([]string{"admin", "ticket", "reply", id, "--body", "Redémarrage fait.", "--as", "Ada"},
		storeFlags(t, data)...)...)
	reply := waitMail(t, maildir, rcpt, seen, 2*time.Minute)
	h := reply.header
	if h.Get("In-Reply-To") != root || !strings.Contains(h.Get("References"), root) {
		t.Errorf("the reply's In-Reply-To %q, References %q, want the root %s", h.Get("In-Reply-To"), h.Get("References"), root)
	}
	if h.Get("Content-Language") != "fr" || !strings.Contains(reply.text, "Redémarrage fait.") || !strings.Contains(reply.text, "Ada") ||
		!strings.Contains(reply.text, "http://"+addr+"/support/"+id) {
		t.Errorf("the reply (language %q):\n%s", h.Get("Content-Language"), reply.text)
	}
	time.Sleep(2 * time.Second) // a mailed note would be delivered by now
	files, _ := filepath.Glob(filepath.Join(maildir, "new", "*"))
	for _, f := range files {
		if raw, err := os.ReadFile(f); err == nil && bytes.Contains(raw, []byte("secret-"+tag)) {
			t.Errorf("the internal note was mailed: %s", f)
		}
	}
}
