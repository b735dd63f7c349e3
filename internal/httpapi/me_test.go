package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/berthhq/berth/internal/testenv"
)

// TestPatchMeLanguage: PATCH /me sets the account's language with any token (scope
// read), answers the account as GET /me does, and the very next error message speaks
// it; anything but en, de, fr is 422 on language, in the language the account had.
func TestPatchMeLanguage(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "100", "")
	reader := as(env, a, "read")

	// Served from the token cache (SQLite) until the change: it must see it at once.
	if got := wantError(t, reader.Do("GET", "/servers/999999", nil), 404, "not_found").Message; got != msg("en", "error.not_found") {
		t.Fatalf("before: %q", got)
	}
	me := data(t, reader.Do("PATCH", "/me", map[string]any{"language": "de"}).Want(t, http.StatusOK))
	if me["language"] != "de" || me["email"] == "" || len(me["scopes"].([]any)) != 1 || me["token"].(map[string]any)["name"] != "test" {
		t.Errorf("PATCH /me answered %v", me)
	}
	for _, c := range []caller{reader, a} { // every token of the account
		if got := wantError(t, c.Do("GET", "/servers/999999", nil), 404, "not_found").Message; got != msg("de", "error.not_found") {
			t.Errorf("next error: %q, want German %q", got, msg("de", "error.not_found"))
		}
	}
	if got := data(t, a.Do("GET", "/me", nil).Want(t, 200))["language"]; got != "de" {
		t.Errorf("GET /me language %v", got)
	}

	oneOf := func(lang string) string { return msg(lang, "validation.one_of", "values", "en, de, fr") }
	for _, tc := range []struct {
		body  any
		field string
		want  string
	}{
		{map[string]any{"language": "es"}, "language", oneOf("de")},
		{map[string]any{"language": "DE"}, "language", oneOf("de")},
		{map[string]any{"language": ""}, "language", oneOf("de")},
		{map[string]any{"language": 1}, "language", msg("de", "validation.type_string")},
		{map[string]any{"language": []string{"fr"}}, "language", msg("de", "validation.type_string")},
		{map[string]any{"lang": "fr"}, "lang", msg("de", "validation.unknown_field")},
		{map[string]any{"language": "fr", "name": "x"}, "name", msg("de", "validation.unknown_field")},
		{"{", "body", msg("de", "validation.invalid_json")},
		{`["fr"]`, "body", msg("de", "validation.body_shape")},
	} {
		e := wantInvalid(t, reader.Do("PATCH", "/me", tc.body), tc.field)
		if e.Errors[tc.field][0] != tc.want {
			t.Errorf("%v: %v, want %q on %s", tc.body, e.Errors, tc.want, tc.field)
		}
	}
	if got := data(t, a.Do("GET", "/me", nil).Want(t, 200))["language"]; got != "de" {
		t.Errorf("after refused changes: language %v, want de", got)
	}

	// A body without the field changes nothing.
	for _, body := range []any{nil, map[string]any{}} {
		if got := data(t, reader.Do("PATCH", "/me", body).Want(t, 200))["language"]; got != "de" {
			t.Errorf("PATCH /me %v: language %v, want de unchanged", body, got)
		}
	}
	data(t, reader.Do("PATCH", "/me", map[string]any{"language": "fr"}).Want(t, 200))
	e := wantInvalid(t, reader.Do("PATCH", "/me", map[string]any{"language": "xx"}), "language")
	if e.Message != oneOf("fr") {
		t.Errorf("after fr: %q, want %q", e.Message, oneOf("fr"))
	}
	// Before a token is known the language stays the request's.
	r := env.Do("", "PATCH", "/me", map[string]any{"language": "de"}, http.Header{"Accept-Language": {"de"}})
	if got := wantError(t, r, 401, "unauthenticated").Message; got != msg("de", "error.unauthenticated") {
		t.Errorf("401: %q", got)
	}
	// Another account is not touched.
	b := env.NewAccount("en", "100", "read")
	if got := data(t, b.Do("GET", "/me", nil).Want(t, 200))["language"]; got != "en" {
		t.Errorf("another account: %v", got)
	}
}
