package tfprovider

import (
	"bytes"
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"golang.org/x/crypto/ssh"
)

// sameKey reports whether two spellings of a public_key are the same SSH key to
// Berth: the same key type and key bytes, whatever the comment and the whitespace
// around and between the parts. Berth stores a key normalised (one space between
// type, base64 and comment; no line end) and holds it once in an account, by its
// fingerprint over those bytes (api/openapi.yaml, SSHKey and POST /ssh-keys). Two
// values either of which is not a single OpenSSH public key line (no options
// before it) are compared as they are.
func sameKey(a, b string) bool {
	if a == b {
		return true
	}
	ka, kb := parseKey(a), parseKey(b)
	return ka != nil && kb != nil && bytes.Equal(ka.Marshal(), kb.Marshal())
}

// parseKey is the key of s, a public key line as Berth takes it, or nil.
func parseKey(s string) ssh.PublicKey {
	s = strings.TrimSpace(s)
	if strings.ContainsAny(s, "\r\n") {
		return nil
	}
	k, _, options, rest, err := ssh.ParseAuthorizedKey([]byte(s))
	if err != nil || len(options) > 0 || len(rest) > 0 {
		return nil
	}
	return k
}

// keepSameKey plans public_key as the state has it when the configuration holds
// the same key in another spelling (sameKey): the trailing newline file() reads,
// another comment. Without it an imported key, which the state has as Berth keeps
// it, would be replaced by the next plan. OpenTofu and Terraform take a planned
// value other than the configuration's when it is the prior state's: the provider
// says the two are the same.
type keepSameKey struct{}

func (keepSameKey) Description(context.Context) string {
	return "Keeps the state's public key when the configuration holds the same key (type and base64) spelled otherwise."
}

func (m keepSameKey) MarkdownDescription(ctx context.Context) string { return m.Description(ctx) }

func (keepSameKey) PlanModifyString(_ context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if req.StateValue.IsNull() || req.StateValue.IsUnknown() || req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if sameKey(req.ConfigValue.ValueString(), req.StateValue.ValueString()) {
		resp.PlanValue = req.StateValue
	}
}
