package tfprovider

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/berthhq/berth/internal/testenv"
)

// TestSameKey: the spelling of a public key (line end, comment, whitespace) is no
// difference; its type and key bytes are; what is not one key line compares as it is.
func TestSameKey(t *testing.T) {
	t.Parallel()
	ed1, _, _ := ed25519.GenerateKey(rand.Reader)
	ed2, _, _ := ed25519.GenerateKey(rand.Reader)
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k1, k2, k3 := testenv.AuthorizedKey(t, ed1), testenv.AuthorizedKey(t, ed2), testenv.AuthorizedKey(t, &ec.PublicKey)
	typ, blob, _ := strings.Cut(k1, " ")
	for _, c := range []struct {
		name string
		a, b string
		same bool
	}{
		{"identical", k1 + " me@laptop", k1 + " me@laptop", true},
		{"trailing newline", k1 + " me@laptop\n", k1 + " me@laptop", true},
		{"CRLF", k1 + " me@laptop\r\n", k1 + " me@laptop", true},
		{"other comment", k1 + " me@desktop", k1 + " me@laptop", true},
		{"no comment", k1 + "\n", k1 + " me@laptop", true},
		{"comment of several words", k1 + " my  old laptop", k1 + " me@laptop", true},
		{"spaces and tabs", "  " + typ + " \t " + blob + "   me@laptop \t\n", k1 + " me@laptop", true},
		{"other key", k2 + " me@laptop", k1 + " me@laptop", false},
		{"other type", k3 + " me@laptop", k1 + " me@laptop", false},
		{"type word not the blob's", "ecdsa-sha2-nistp256 " + blob, k1, false},
		{"blob cut short", typ + " " + blob[:len(blob)-4], k1, false},
		{"two lines", k1 + "\n" + k2, k1, false},
		{"options before the key", `no-pty ` + k1, k1, false},
		{"not keys, equal", "not a key", "not a key", true},
		{"not keys, spaces differ", "not a key\n", "not a key", false},
		{"not keys, differ", "not a key", "no key", false},
		{"empty and key", "", k1, false},
		{"empty", "", "", true},
	} {
		if got := sameKey(c.a, c.b); got != c.same {
			t.Errorf("%s: sameKey(%q, %q) = %v, want %v", c.name, c.a, c.b, got, c.same)
		}
		if got := sameKey(c.b, c.a); got != c.same {
			t.Errorf("%s: sameKey(%q, %q) = %v, want %v", c.name, c.b, c.a, got, c.same)
		}
	}
}

// TestKeepSameKey: the plan has the state's spelling of the configuration's key, the
// configuration's for another key or when there is no state to keep.
func TestKeepSameKey(t *testing.T) {
	t.Parallel()
	ed1, _, _ := ed25519.GenerateKey(rand.Reader)
	ed2, _, _ := ed25519.GenerateKey(rand.Reader)
	k1, k2 := testenv.AuthorizedKey(t, ed1), testenv.AuthorizedKey(t, ed2)
	for _, c := range []struct {
		name          string
		config, state types.String
		want          types.String
	}{
		{"same key", types.StringValue(k1 + " me@desktop\n"), types.StringValue(k1 + " me@laptop"), types.StringValue(k1 + " me@laptop")},
		{"other key", types.StringValue(k2 + "\n"), types.StringValue(k1), types.StringValue(k2 + "\n")},
		{"create", types.StringValue(k1 + "\n"), types.StringNull(), types.StringValue(k1 + "\n")},
		{"unknown", types.StringUnknown(), types.StringValue(k1), types.StringUnknown()},
	} {
		resp := &planmodifier.StringResponse{PlanValue: c.config}
		keepSameKey{}.PlanModifyString(context.Background(),
			planmodifier.StringRequest{ConfigValue: c.config, PlanValue: c.config, StateValue: c.state}, resp)
		if !resp.PlanValue.Equal(c.want) || resp.Diagnostics.HasError() {
			t.Errorf("%s: planned %s (%v), want %s", c.name, resp.PlanValue, resp.Diagnostics, c.want)
		}
	}
}
