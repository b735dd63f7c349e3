package hosting

// Fuzz tests of the input rules (issue 6). Each checks a rule against an independent,
// deliberately naive statement of what docs/api.md says, so that a
// change to either shows; and every rejection against the message catalog, so that no
// client ever reads a bare message id. Seeds are here; what the fuzzer found worth
// keeping is under testdata/fuzz/<Name>.
//
//	go test -run='^$' -fuzz='^FuzzSnapshotName$' -fuzztime=1m ./internal/hosting

import (
	"bufio"
	"bytes"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"golang.org/x/crypto/ssh"

	"github.com/berthhq/berth/internal/i18n"
)

var catalog = sync.OnceValue(i18n.MustLoad)

// checkMessages fails unless every message of err (a validation *Error on the given
// fields only) is in the catalog and renders in every language with all its
// placeholders filled.
func checkMessages(t *testing.T, err error, fields ...string) {
	t.Helper()
	e, ok := err.(*Error)
	if !ok || e.Code != CodeValidationFailed || len(e.Fields) == 0 || len(e.Order) != len(e.Fields) {
		t.Fatalf("error %#v, want a validation *Error with fields", err)
	}
	cat := catalog()
	known := map[string]bool{}
	for _, id := range cat.IDs() {
		known[id] = true
	}
	for field, msgs := range e.Fields {
		if !strings.Contains(" "+strings.Join(fields, " ")+" ", " "+field+" ") {
			t.Errorf("error on field %q, want only %v", field, fields)
		}
		for _, m := range msgs {
			if !known[m.ID] {
				t.Errorf("field %s: message id %q is not in the catalog", field, m.ID)
				continue
			}
			for _, lang := range cat.Languages() {
				if s := cat.T(lang, m.ID, m.Args); s == m.ID || strings.Contains(s, "<no value>") {
					t.Errorf("field %s: %s renders in %s as %q", field, m.ID, lang, s)
				}
			}
		}
	}
}

// FuzzSnapshotName: CheckSnapshotName accepts exactly the names of docs/api.md, Servers
// (2 to 40 characters, [A-Za-z][A-Za-z0-9_-]*, no "auto-" prefix in any case), and
// rejects the others with one catalogued message on the field.
func FuzzSnapshotName(f *testing.F) {
	for _, s := range []string{
		"", " ", "a", "ab", "before-upgrade_2", "Z" + strings.Repeat("x", 39), "Z" + strings.Repeat("x", 40),
		"auto", "auto-", "AUTO-x", "aUtO-nightly", "autumn", "auto_x", "1abc", "-abc", "_abc", "ab c", "ab.c",
		"äbc", "abç", "ab\n", "ab\x00", "a\u212a", "\u212auto-x", "ab\xff", "a" + strings.Repeat("é", 39),
		"\tab", "ab ", "aß", "ａｂ",
	} {
		f.Add(s)
	}
	valid := regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{1,39}$`)
	reserved := regexp.MustCompile(`(?i)^auto-`)
	f.Fuzz(func(t *testing.T, s string) {
		var v Validation
		CheckSnapshotName(&v, "name", s)
		err := v.Err()
		want := valid.MatchString(s) && !reserved.MatchString(s)
		if got := err == nil; got != want {
			t.Fatalf("CheckSnapshotName(%q) accepted %v, want %v (err %v)", s, got, want, err)
		}
		if err != nil {
			checkMessages(t, err, "name")
			if n := len(err.(*Error).Fields["name"]); n != 1 {
				t.Errorf("CheckSnapshotName(%q): %d messages, want 1", s, n)
			}
		}
	})
}

// FuzzTextRules: labels (display, key, project and recipe names: 1 to 64 characters,
// not only blanks, no control characters) and root passwords (8 to 72 characters,
// whatever their bytes, no control characters); a rejected value has catalogued
// messages. (The order hashes any accepted password: ops' TestRootPasswordHash.)
func FuzzTextRules(f *testing.F) {
	for _, s := range []string{
		"", " ", "\t\n", "x", "web", strings.Repeat("a", 64), strings.Repeat("a", 65), strings.Repeat("é", 64),
		strings.Repeat("é", 65), "a\x00b", "a\x1fb", "a\x7fb", "a\u0085b", "a\u2028b", "\xff\xfe", " padded ",
		"12345678", "1234567", strings.Repeat("p", 72), strings.Repeat("p", 73), strings.Repeat("ä", 36),
		strings.Repeat("ä", 37), strings.Repeat("ä", 72), strings.Repeat("🔑", 18), strings.Repeat("🔑", 19),
		"pass\x00word", "日本語のパスワードです", strings.Repeat("é", 40), strings.Repeat("😀", 72), strings.Repeat("😀", 73),
		"password\x1b[2J", "password\t", "pass\u0085word",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		runes := []rune(s) // invalid bytes count as one character each, as utf8 does
		// Label.
		var v Validation
		CheckLabel(&v, "name", s)
		blank, control := true, false
		for _, r := range runes {
			switch r {
			case ' ', '\t', '\n', '\v', '\f', '\r', 0x85, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000:
			default:
				if r < 0x2000 || r > 0x200a {
					blank = false
				}
			}
			if r < 0x20 || r == 0x7f {
				control = true
			}
		}
		want := !blank && len(runes) <= 64 && !control
		if err := v.Err(); (err == nil) != want {
			t.Errorf("CheckLabel(%q) = %v, want accepted %v", s, err, want)
		} else if err != nil {
			checkMessages(t, err, "name")
		}

		// Root password.
		v = Validation{}
		CheckRootPassword(&v, "root_password", s)
		err := v.Err()
		if err != nil {
			checkMessages(t, err, "root_password")
			if len(runes) >= 8 && len(runes) <= 72 && !control {
				t.Errorf("CheckRootPassword(%q) = %v; it has %d characters, none a control character", s, err, len(runes))
			}
			return
		}
		if len(runes) < 8 || len(runes) > 72 || control {
			t.Fatalf("CheckRootPassword(%q) accepted %d characters (control characters: %v)", s, len(runes), control)
		}
	})
}

// FuzzServerRef: the {id}-or-name path parameter. A ref is exactly a positive decimal
// int64 without sign or leading zero (and then it round-trips), or exactly
// server-[a-z0-9]{6}; anything else names no server (404 at the API).
func FuzzServerRef(f *testing.F) {
	for _, s := range []string{
		"", "0", "1", "42", "007", "+1", "-1", " 1", "1 ", "1.5", "1e3", "0x10", "١٢", "9223372036854775807",
		"9223372036854775808", "99999999999999999999", "server-", "server-ab12cd", "server-AB12CD", "server-ab12c",
		"server-ab12cde", "server-ab 2cd", "server-ab12c\x00", "Server-ab12cd", "server-ab12cd/", "server-ab12c\u0131",
		"server--ab12c", "server-", "\xff", "1\x00",
	} {
		f.Add(s)
	}
	name := regexp.MustCompile(`^server-[a-z0-9]{6}$`)
	id := regexp.MustCompile(`^[1-9][0-9]{0,18}$`)
	f.Fuzz(func(t *testing.T, s string) {
		ref, ok := ParseServerRef(s)
		n, idErr := ParseID(s)
		isID := id.MatchString(s)
		if isID {
			if _, err := strconv.ParseInt(s, 10, 64); err != nil {
				isID = false // 19 digits past MaxInt64
			}
		}
		switch {
		case name.MatchString(s):
			if !ok || ref != (ServerRef{Name: s}) {
				t.Fatalf("ParseServerRef(%q) = %+v, %v; want the name", s, ref, ok)
			}
		case isID:
			if !ok || ref.Name != "" || strconv.FormatInt(ref.ID, 10) != s {
				t.Fatalf("ParseServerRef(%q) = %+v, %v; want the id", s, ref, ok)
			}
		default:
			if ok {
				t.Fatalf("ParseServerRef(%q) = %+v, true; want no server", s, ref)
			}
		}
		if (idErr == nil) != isID || (isID && strconv.FormatInt(n, 10) != s) {
			t.Fatalf("ParseID(%q) = %d, %v; want an id: %v", s, n, idErr, isID)
		}
	})
}

type sshKeySample struct{ fingerprint, verdict, line string }

// sshKeySamples reads testdata/ssh-keys.txt: keys made by ssh-keygen with the
// fingerprint ssh-keygen gave them.
func sshKeySamples(tb testing.TB) []sshKeySample {
	tb.Helper()
	f, err := os.Open("testdata/ssh-keys.txt")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []sshKeySample
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") || strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		parts := strings.SplitN(sc.Text(), " ", 3)
		if len(parts) != 3 {
			tb.Fatalf("ssh-keys.txt: bad line %q", sc.Text())
		}
		out = append(out, sshKeySample{parts[0], parts[1], parts[2]})
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// TestParsePublicKeyOpenSSH: keys made by ssh-keygen get the fingerprint ssh-keygen
// gives them, and the verdict of docs/api.md, SSH keys, projects and recipes.
func TestParsePublicKeyOpenSSH(t *testing.T) {
	t.Parallel()
	for _, k := range sshKeySamples(t) {
		norm, fp, msg := ParsePublicKey(k.line)
		switch {
		case k.verdict == "ok" && (msg != "" || fp != k.fingerprint || norm != k.line):
			t.Errorf("%.40s: %q, %q, %q; want %s", k.line, norm, fp, msg, k.fingerprint)
		case k.verdict != "ok" && msg != k.verdict:
			t.Errorf("%.40s: message %q, want %s", k.line, msg, k.verdict)
		}
	}
}

// FuzzSSHPublicKey: ParsePublicKey never panics; what it accepts, x/crypto/ssh parses
// as one key of an allowed type (rsa of at least 2048 bits), with the SHA256
// fingerprint of its wire form; the line holds that key's type, its base64 and the
// comment and nothing else (no authorized_keys options dropped on the way); the
// normal form parses back to itself; and the same
// key with other blanks around it or another comment has the same fingerprint.
// Rejections carry a catalogued message.
func FuzzSSHPublicKey(f *testing.F) {
	for _, k := range sshKeySamples(f) {
		f.Add(k.line)
		fields := strings.Fields(k.line)
		f.Add(fields[0] + " " + fields[1])                           // no comment
		f.Add("\t " + fields[0] + "\t" + fields[1] + "  a  b c \t ") // odd blanks
		f.Add(`from="10.0.0.1",no-pty ` + k.line)                    // authorized_keys options
		f.Add(fields[0] + " " + fields[1][:len(fields[1])/2])        // cut short
		f.Add(k.line + "\n" + k.line)
	}
	for _, s := range []string{"", " ", "ssh-ed25519", "ssh-ed25519 ", "ssh-ed25519 AAAA", "ssh-ed25519 ====",
		"hello world", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAID3YGPkvxwpLYTWLsdn1mLoJiEPHQZpKYiaXghboYDVf\x00x",
		"sk-ssh-ed25519@openssh.com AAAA", "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAAQE="} {
		f.Add(s)
	}
	allowed := map[string]bool{ssh.KeyAlgoED25519: true, ssh.KeyAlgoECDSA256: true, ssh.KeyAlgoECDSA384: true,
		ssh.KeyAlgoECDSA521: true, ssh.KeyAlgoRSA: true}
	f.Fuzz(func(t *testing.T, s string) {
		norm, fp, msg := ParsePublicKey(s)
		if msg != "" {
			if norm != "" || fp != "" {
				t.Fatalf("ParsePublicKey(%q) rejected (%s) but returned %q, %q", s, msg, norm, fp)
			}
			checkMessages(t, Invalid("public_key", msg), "public_key")
			return
		}
		pk, comment, _, rest, err := ssh.ParseAuthorizedKey([]byte(strings.TrimSpace(s)))
		if err != nil || len(rest) > 0 {
			t.Fatalf("ParsePublicKey(%q) accepted what x/crypto/ssh does not: %v, rest %q", s, err, rest)
		}
		if !allowed[pk.Type()] {
			t.Fatalf("ParsePublicKey(%q) accepted key type %s", s, pk.Type())
		}
		if pk.Type() == ssh.KeyAlgoRSA {
			if bits := pk.(ssh.CryptoPublicKey).CryptoPublicKey().(*rsa.PublicKey).N.BitLen(); bits < 2048 {
				t.Fatalf("ParsePublicKey(%q) accepted an RSA key of %d bits", s, bits)
			}
		}
		sum := sha256.Sum256(pk.Marshal())
		if want := "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:]); fp != want {
			t.Fatalf("ParsePublicKey(%q) fingerprint %s, want %s", s, fp, want)
		}
		if !utf8.ValidString(norm) || strings.ContainsFunc(norm, IsControl) {
			t.Fatalf("ParsePublicKey(%q) normal form %q is not UTF-8 text without control characters", s, norm)
		}
		// Nothing the user wrote is dropped: the line is the key's type, its base64
		// wire form and the comment, with blanks between.
		fields := strings.Fields(s)
		whole := len(fields) >= 2 && fields[0] == pk.Type() &&
			strings.Join(strings.Fields(comment), " ") == strings.Join(fields[2:], " ")
		if whole {
			wire, err := base64.StdEncoding.DecodeString(fields[1])
			whole = err == nil && bytes.Equal(wire, pk.Marshal())
		}
		if !whole {
			t.Fatalf("ParsePublicKey(%q) accepted it as %q: not all of it is the key and its comment", s, norm)
		}
		// The normal form is a fixed point.
		if norm2, fp2, msg2 := ParsePublicKey(norm); norm2 != norm || fp2 != fp || msg2 != "" {
			t.Fatalf("ParsePublicKey(%q) = %q; parsing that again gives %q, %q, %q", s, norm, norm2, fp2, msg2)
		}
		// Blanks and comments do not change which key it is.
		keyText := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pk)))
		for _, variant := range []string{keyText, " \t" + keyText + " \t\n", keyText + " another comment", keyText + "\t" + comment} {
			if _, fp2, msg2 := ParsePublicKey(variant); fp2 != fp || msg2 != "" {
				t.Fatalf("ParsePublicKey(%q): fingerprint %s, but %q gives %q, %q", s, fp, variant, fp2, msg2)
			}
		}
	})
}
