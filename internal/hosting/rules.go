package hosting

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/ssh"
)

// Limits of field lengths (docs/api.md, Servers; SSH keys, projects and recipes).
const (
	NameMaxLen         = 64
	RootPasswordMinLen = 8
	RootPasswordMaxLen = 72
	RecipeScriptMax    = 64 << 10
)

// CheckLabel validates a 1–64 character label such as a display name, key, project or
// recipe name, recording an error on field.
func CheckLabel(v *Validation, field, s string) {
	n := utf8.RuneCountInString(s)
	switch {
	case strings.TrimSpace(s) == "":
		v.Add(field, "validation.required")
	case n > NameMaxLen:
		v.Add(field, "validation.max_chars", "max", NameMaxLen)
	case strings.ContainsFunc(s, IsControl):
		v.Add(field, "validation.no_control_chars")
	}
}

// CheckText refuses, on field, a multi-line text (a message, a script) that holds a
// NUL character: PostgreSQL's text cannot keep one, and no script or message has a
// use for one. Every other character, line breaks and tabs among them, is the text's.
func CheckText(v *Validation, field, s string) {
	if strings.ContainsRune(s, 0) {
		v.Add(field, "validation.text_nul")
	}
}

// IsControl reports whether r is a control character that no name, key comment or
// password may hold: ASCII's (C0, tab and newline included, and DEL), which a
// terminal or an authorized_keys file acts on.
func IsControl(r rune) bool { return r < 0x20 || r == 0x7f }

// Limits of an account's console password: 8 to 72 bytes, as bcrypt, its hash, reads
// no further than the 72nd byte (a longer one is refused rather than cut short).
const (
	PasswordMinLen = 8
	PasswordMaxLen = 72
)

// CheckPassword validates a new console password of an account, as `admin account
// create` and the console's Settings set it: PasswordMinLen to PasswordMaxLen bytes.
func CheckPassword(v *Validation, field, s string) {
	if len(s) < PasswordMinLen || len(s) > PasswordMaxLen {
		v.Add(field, "validation.password_length", "min", PasswordMinLen, "max", PasswordMaxLen)
	}
}

// CheckRootPassword validates the optional root password of an order: 8 to 72
// characters (not bytes: 72 of any script), none a control character. Its hash
// (SHA-512-crypt, which takes a password of any length) is checked by the guest's
// crypt(3) when root signs in on the console, where no control character can be
// typed.
func CheckRootPassword(v *Validation, field, s string) {
	n := utf8.RuneCountInString(s)
	switch {
	case n < RootPasswordMinLen || n > RootPasswordMaxLen:
		v.Add(field, "validation.between_chars", "min", RootPasswordMinLen, "max", RootPasswordMaxLen)
	case strings.ContainsFunc(s, IsControl):
		v.Add(field, "validation.no_control_chars")
	}
}

// ParsePublicKey checks an OpenSSH public key (ed25519, ecdsa, rsa of at least 2048
// bits) and returns its normalised text and its SHA256 fingerprint. The message id of
// the failure is returned in msg.
func ParsePublicKey(s string) (normalized, fingerprint string, msg string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", "", "validation.required"
	}
	if strings.ContainsAny(s, "\r\n") {
		return "", "", "validation.ssh_key_one_line"
	}
	// ParseAuthorizedKey reads an authorized_keys line, whose options (from=,
	// command=, no-pty, or any first word before a key) a public key does not have:
	// storing the key without them would drop what the user wrote, restrictions
	// included, without a word.
	pk, comment, options, rest, err := ssh.ParseAuthorizedKey([]byte(s))
	if err != nil || len(rest) > 0 || len(options) > 0 {
		return "", "", "validation.ssh_key_format"
	}
	switch pk.Type() {
	case ssh.KeyAlgoED25519, ssh.KeyAlgoECDSA256, ssh.KeyAlgoECDSA384, ssh.KeyAlgoECDSA521:
	case ssh.KeyAlgoRSA:
		cpk, ok := pk.(ssh.CryptoPublicKey)
		if !ok {
			return "", "", "validation.ssh_key_format"
		}
		rk, ok := cpk.CryptoPublicKey().(*rsa.PublicKey)
		if !ok || rk.N.BitLen() < 2048 {
			return "", "", "validation.ssh_key_rsa_short"
		}
	default:
		return "", "", "validation.ssh_key_type"
	}
	// The key's wire form must be the one ssh writes: x/crypto also reads a
	// non-canonical one (an RSA exponent or modulus with leading zero bytes) and
	// would store, and fingerprint, a form other than the one the user has, whose
	// fingerprint ssh-keygen -l computes over the bytes as written.
	if fields := strings.Fields(s); len(fields) < 2 {
		return "", "", "validation.ssh_key_format"
	} else if wire, err := base64.StdEncoding.DecodeString(fields[1]); err != nil || !bytes.Equal(wire, pk.Marshal()) {
		return "", "", "validation.ssh_key_format"
	}
	if strings.ContainsFunc(comment, IsControl) || !utf8.ValidString(comment) {
		return "", "", "validation.ssh_key_comment"
	}
	normalized = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pk)))
	if comment != "" {
		normalized += " " + comment
	}
	return normalized, ssh.FingerprintSHA256(pk), ""
}

const nameAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// NewServerName returns a fresh random name of the form server-xxxxxx.
func NewServerName() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	for i := range b {
		b[i] = nameAlphabet[int(b[i])%len(nameAlphabet)]
	}
	return "server-" + string(b)
}

// ServerRef is how a path names a server: by numeric id or by name.
type ServerRef struct {
	ID   int64
	Name string
}

// ParseServerRef reads the {id} path parameter. ok is false when it can name no
// server at all (answered 404 like any unknown server).
func ParseServerRef(s string) (ref ServerRef, ok bool) {
	if strings.HasPrefix(s, "server-") {
		rest := s[len("server-"):]
		if len(rest) != 6 || strings.Trim(rest, nameAlphabet) != "" {
			return ref, false
		}
		return ServerRef{Name: s}, true
	}
	id, err := ParseID(s)
	if err != nil {
		return ref, false
	}
	return ServerRef{ID: id}, true
}

// ParseID reads a positive decimal id as it appears in a path.
func ParseID(s string) (int64, error) {
	if s == "" || s[0] == '+' || s[0] == '-' || (len(s) > 1 && s[0] == '0') {
		return 0, strconv.ErrSyntax
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, strconv.ErrSyntax
	}
	return id, nil
}

// Snapshot name rules (docs/api.md, Servers).
const (
	SnapshotNameMinLen = 2
	SnapshotNameMaxLen = 40
	// SnapshotReservedPrefix is kept for snapshots Berth takes itself.
	SnapshotReservedPrefix = "auto-"
)

// CheckSnapshotName validates a snapshot name: 2 to 40 characters, letters, digits,
// dashes and underscores, starting with a letter, not starting with "auto-" in any case.
func CheckSnapshotName(v *Validation, field, s string) {
	n := utf8.RuneCountInString(s)
	switch {
	case strings.TrimSpace(s) == "":
		v.Add(field, "validation.required")
	case n < SnapshotNameMinLen || n > SnapshotNameMaxLen:
		v.Add(field, "validation.between_chars", "min", SnapshotNameMinLen, "max", SnapshotNameMaxLen)
	case !isASCIILetter(s[0]) || strings.ContainsFunc(s, func(r rune) bool {
		return !(r < utf8.RuneSelf && isASCIILetter(byte(r))) && !(r >= '0' && r <= '9') && r != '-' && r != '_'
	}):
		v.Add(field, "validation.snapshot_name_chars")
	case strings.HasPrefix(strings.ToLower(s), SnapshotReservedPrefix):
		v.Add(field, "validation.snapshot_name_reserved", "prefix", SnapshotReservedPrefix)
	}
}

func isASCIILetter(b byte) bool { return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') }
