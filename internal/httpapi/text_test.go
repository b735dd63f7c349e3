package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/berthhq/berth/internal/testenv"
)

// TestBodyMustBeText: a body that is not UTF-8, or whose strings hold an unpaired
// surrogate escape, is refused on body (encoding/json would store U+FFFD in place of
// what was sent); paired escapes and an escaped backslash are text.
func TestBodyMustBeText(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("de", "", "")
	want := msg("de", "validation.invalid_utf8")
	for _, body := range []string{
		"{\"name\":\"ab\xff\"}",
		"{\"name\":\"\xed\xa0\x80\"}", // a surrogate in UTF-8 form
		"{\"name\":\"\xc0\xaf\"}",     // an overlong '/'
		`{"name":"\ud800"}`,
		`{"name":"a\udc00b"}`,
		`{"name":"\ud800\u0041"}`,
		`{"name":"\ud800\ud800"}`,
		`{"name":"\uDBFF"}`,
		`{"name":"ok","x":"\ud800"}`,
	} {
		wantInvalidMsg(t, a.Do("POST", "/projects", body), "body", want)
	}
	if ps := items(t, a.Do("GET", "/projects", nil).Want(t, 200)); len(ps) != 0 {
		t.Fatalf("refused bodies wrote %v", ps)
	}
	for body, name := range map[string]string{
		`{"name":"\ud83d\ude00 ok"}`: "😀 ok",
		`{"name":"a\\ud800"}`:        `a\ud800`,
		`{"name":"\ufffd"}`:          "\ufffd",
	} {
		if got := data(t, a.Do("POST", "/projects", body).Want(t, http.StatusCreated))["name"]; got != name {
			t.Errorf("%s: name %q, want %q", body, got, name)
		}
	}
}

// TestSSHKeyCommentText: a key's comment goes to the guest's authorized_keys and to
// terminals: control characters are refused on public_key.
func TestSSHKeyCommentText(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "", "")
	key := testenv.PublicKey(t) + " test@berth"
	for _, comment := range []string{"\u0000", "\u001b[2J", "a\u001b]0;title\u0007", "a\tb", "a\u007fb"} {
		wantInvalidMsg(t, a.Do("POST", "/ssh-keys", map[string]any{"name": "k", "public_key": key + " " + comment}),
			"public_key", msg("en", "validation.ssh_key_comment"))
	}
	got := data(t, a.Do("POST", "/ssh-keys", map[string]any{"name": "k", "public_key": key + " ada@laptop é"}).Want(t, 201))
	if got["public_key"] != key+" ada@laptop é" {
		t.Errorf("stored key %q", got["public_key"])
	}
}
