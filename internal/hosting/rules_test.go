package hosting

import (
	"errors"
	"strings"
	"testing"
)

func TestParseServerRef(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		ok   bool
		want ServerRef
	}{
		{"42", true, ServerRef{ID: 42}},
		{"server-ab12cd", true, ServerRef{Name: "server-ab12cd"}},
		{"server-AB12CD", false, ServerRef{}},
		{"server-ab12c", false, ServerRef{}},
		{"server-ab12cde", false, ServerRef{}},
		{"0", false, ServerRef{}},
		{"-1", false, ServerRef{}},
		{"+1", false, ServerRef{}},
		{"007", false, ServerRef{}},
		{"1.5", false, ServerRef{}},
		{"99999999999999999999", false, ServerRef{}},
		{"", false, ServerRef{}},
	} {
		got, ok := ParseServerRef(tc.in)
		if ok != tc.ok || got != tc.want {
			t.Errorf("ParseServerRef(%q) = %+v, %v; want %+v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestNewServerName(t *testing.T) {
	t.Parallel()
	for range 100 {
		n := NewServerName()
		if _, ok := ParseServerRef(n); !ok {
			t.Fatalf("NewServerName() = %q, not a valid name", n)
		}
	}
}

const testEd25519 = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl alice@example"

func TestParsePublicKey(t *testing.T) {
	t.Parallel()
	norm, fp, msg := ParsePublicKey("  " + testEd25519 + "\n")
	if msg != "" || norm != testEd25519 || !strings.HasPrefix(fp, "SHA256:") || strings.HasSuffix(fp, "=") {
		t.Fatalf("ParsePublicKey(valid) = %q, %q, %q", norm, fp, msg)
	}
	for _, tc := range []struct{ in, msg string }{
		{"", "validation.required"},
		{"ssh-ed25519 notbase64", "validation.ssh_key_format"},
		{"hello world", "validation.ssh_key_format"},
		{testEd25519 + "\n" + testEd25519, "validation.ssh_key_one_line"},
		{`from="10.0.0.0/8",no-pty ` + testEd25519, "validation.ssh_key_format"},
		{"0 " + testEd25519, "validation.ssh_key_format"},
		// Control characters in the comment would reach the guest's authorized_keys
		// (and an operator's terminal).
		{testEd25519 + "\x00", "validation.ssh_key_comment"},
		{testEd25519 + " \x1b[2J", "validation.ssh_key_comment"},
		{testEd25519 + " a\x1b]0;owned\x07", "validation.ssh_key_comment"},
		{testEd25519 + " a\x7fb", "validation.ssh_key_comment"},
		{testEd25519 + " a\u0085b", ""}, // as in names: only ASCII's control characters
		{testEd25519 + " a\tb", "validation.ssh_key_comment"},
		{testEd25519 + " a\xffb", "validation.ssh_key_comment"},
		{testEd25519 + " ada@laptop (work) é ключ", ""},
		// A 1024-bit RSA key.
		{"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQDFTkwl5PEbq0dqtUu0JuXvCX5p2ZRRRTZ2ZGmIIbzhZ15PnXcy0UH8M1XZAP2QBHMhafLpzjeVyGNwqH8K5AaGgb3xQ6fXw9lhebkqDDpRQ5hhJKyy2QHZ3FYeT5OiDSfbWbsbH2FuNYf4H+jHvf6lkUPeDbXNlfu8wlYvxg5+Hw==", "validation.ssh_key_rsa_short"},
	} {
		if norm, _, msg := ParsePublicKey(tc.in); msg != tc.msg || (msg == "" && norm != strings.TrimSpace(tc.in)) {
			t.Errorf("ParsePublicKey(%.30q) msg = %q, want %q", tc.in, msg, tc.msg)
		}
	}
}

func TestPowerTransitions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a    PowerAction
		from Status
		to   Status
		ok   bool
	}{
		{PowerOn, StatusStopped, StatusStarting, true},
		{PowerOn, StatusRunning, StatusStarting, false},
		{PowerShutdown, StatusRunning, StatusStopping, true},
		{PowerShutdown, StatusStopped, StatusStopping, false},
		{PowerOff, StatusRunning, StatusStopping, true},
		{PowerReboot, StatusRunning, StatusStopping, true},
		{PowerReboot, StatusStopped, StatusStopping, false},
		{PowerReset, StatusRunning, StatusStarting, true},
		{PowerReset, StatusError, StatusStarting, false},
		{PowerAction("dance"), StatusRunning, "", false},
	} {
		to, ok := tc.a.Transition(tc.from)
		if ok != tc.ok || (ok && to != tc.to) {
			t.Errorf("%s from %s = %s, %v; want %s, %v", tc.a, tc.from, to, ok, tc.to, tc.ok)
		}
	}
}

func TestValidationOrder(t *testing.T) {
	t.Parallel()
	var v Validation
	v.Add("root_password", "validation.between_chars")
	v.Add("zzz", "validation.unknown_field")
	v.Add("plan_id", "validation.required")
	err := v.Err("plan_id", "location_id", "root_password")
	e := err.(*Error)
	if got := strings.Join(e.Order, ","); got != "plan_id,root_password,zzz" {
		t.Fatalf("order = %s", got)
	}
}

func TestCheckSnapshotName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, msg string // msg "" means valid
	}{
		{"ab", ""},
		{"before-upgrade_2", ""},
		{"Z" + strings.Repeat("x", 39), ""},
		{"autumn", ""}, // only the "auto-" prefix is reserved
		{"auto", ""},
		{"", "validation.required"},
		{"   ", "validation.required"},
		{"a", "validation.between_chars"},
		{"a" + strings.Repeat("x", 40), "validation.between_chars"},
		{"1abc", "validation.snapshot_name_chars"},
		{"-abc", "validation.snapshot_name_chars"},
		{"_abc", "validation.snapshot_name_chars"},
		{"ab c", "validation.snapshot_name_chars"},
		{"ab.c", "validation.snapshot_name_chars"},
		{"äbc", "validation.snapshot_name_chars"},
		{"abç", "validation.snapshot_name_chars"},
		{"ab\n", "validation.snapshot_name_chars"},
		{"auto-1", "validation.snapshot_name_reserved"},
		{"AUTO-nightly", "validation.snapshot_name_reserved"},
		{"Auto-x", "validation.snapshot_name_reserved"},
	} {
		var v Validation
		CheckSnapshotName(&v, "name", tc.name)
		err := v.Err()
		if tc.msg == "" {
			if err != nil {
				t.Errorf("%q: %v, want valid", tc.name, err)
			}
			continue
		}
		var e *Error
		if !errors.As(err, &e) || len(e.Fields["name"]) != 1 || e.Fields["name"][0].ID != tc.msg {
			t.Errorf("%q: %v, want %s", tc.name, err, tc.msg)
		}
	}
}

func TestCheckRootPassword(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pw, msg string // msg "" means valid
	}{
		{"1234567", "validation.between_chars"},
		{"12345678", ""},
		{strings.Repeat("p", 72), ""},
		{strings.Repeat("p", 73), "validation.between_chars"},
		{strings.Repeat("ä", 36), ""},
		{strings.Repeat("é", 40), ""}, // 80 bytes: what the outside test was refused
		{strings.Repeat("😀", 72), ""}, // 288 bytes
		{strings.Repeat("😀", 7), "validation.between_chars"},
		{strings.Repeat("😀", 73), "validation.between_chars"},
		{strings.Repeat("ä", 73), "validation.between_chars"},
		{"", "validation.between_chars"},
		{"password\x00", "validation.no_control_chars"},
		{"password\x1b[2J", "validation.no_control_chars"},
		{"pass word\t", "validation.no_control_chars"},
		{"pass\x7fword", "validation.no_control_chars"},
		{"pass word with spaces", ""},
	} {
		var v Validation
		CheckRootPassword(&v, "root_password", tc.pw)
		err := v.Err()
		var e *Error
		switch {
		case tc.msg == "" && err != nil:
			t.Errorf("%q: %v, want valid", tc.pw, err)
		case tc.msg != "" && (!errors.As(err, &e) || e.Fields["root_password"][0].ID != tc.msg):
			t.Errorf("%q: %v, want %s", tc.pw, err, tc.msg)
		}
	}
}
