package tfprovider_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/berthhq/berth/client"
	"github.com/berthhq/berth/internal/i18n"
	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/tfprovider"
)

// The acceptance tests run OpenTofu (TF_ACC_TERRAFORM_PATH, built by scripts/tofu.sh)
// against a real Berth started by each test (internal/testenv: the sim driver at a
// fast time scale), with the provider served in-process. Without TF_ACC they skip,
// as terraform-plugin-testing has it; scripts/test.sh sets it.

// acc is one acceptance test's Berth, account and SDK client (for the checks, which
// ask the API, never the state alone).
type acc struct {
	t    *testing.T
	env  *testenv.Env
	acct *testenv.Account
	c    *client.Client
	// opts are the provider's extra SDK options (default: the env's HTTP client,
	// which checks every answer against api/openapi.yaml).
	opts []client.Option
}

// newAccSkip skips an acceptance test when TF_ACC is unset, as terraform-plugin-testing
// would (but before starting a Berth).
func newAccSkip(t *testing.T) {
	t.Helper()
	if os.Getenv(resource.EnvTfAcc) == "" {
		t.Skipf("Acceptance tests skipped unless env '%s' set", resource.EnvTfAcc)
	}
}

// newAcc starts a Berth with opts (default: no rate limit to speak of, as one test
// makes a few hundred calls in a minute) and an account speaking language.
func newAcc(t *testing.T, language string, opts ...testenv.Options) *acc {
	t.Helper()
	newAccSkip(t)
	o := testenv.Options{RateLimit: 1 << 20}
	if len(opts) > 0 {
		o = opts[0]
	}
	env := testenv.New(t, o)
	acct := env.NewAccount(language, "100", "")
	c, err := client.New(client.WithBaseURL(env.URL), client.WithToken(acct.Token), client.WithHTTPClient(env.Client))
	if err != nil {
		t.Fatal(err)
	}
	return &acc{t: t, env: env, acct: acct, c: c, opts: []client.Option{client.WithHTTPClient(env.Client)}}
}

// providers serves the provider in-process to OpenTofu.
func (a *acc) providers() map[string]func() (tfprotov6.ProviderServer, error) {
	return map[string]func() (tfprotov6.ProviderServer, error){
		"berth": providerserver.NewProtocol6WithError(tfprovider.New("test", a.opts...)()),
	}
}

// config is body after a provider block pointing at the test's Berth.
func (a *acc) config(body string) string {
	return fmt.Sprintf("provider \"berth\" {\n  url   = %q\n  token = %q\n}\n\n", a.env.URL, a.acct.Token) + body
}

func (a *acc) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	a.t.Cleanup(cancel)
	return ctx
}

// attr is an attribute of a resource in the state.
func attr(s *terraform.State, name, key string) (string, error) {
	rs, ok := s.RootModule().Resources[name]
	if !ok {
		return "", fmt.Errorf("%s is not in the state", name)
	}
	v, ok := rs.Primary.Attributes[key]
	if !ok {
		return "", fmt.Errorf("%s has no attribute %s", name, key)
	}
	return v, nil
}

// idOf is the numeric id of a resource in the state.
func idOf(s *terraform.State, name string) (int64, error) {
	v, err := attr(s, name, "id")
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(v, 10, 64)
}

// apiAgrees checks that attributes of a resource in the state hold what the API
// says: get asks the API when the check runs and maps each attribute to the API's
// value ("" for null).
func apiAgrees(name string, get func(id int64) (map[string]string, error)) func(*terraform.State) error {
	return func(s *terraform.State) error {
		id, err := idOf(s, name)
		if err != nil {
			return err
		}
		return agrees(s, name, func() (map[string]string, error) { return get(id) })
	}
}

// dataAgrees is apiAgrees for a data source (which need not have an id).
func dataAgrees(name string, get func() (map[string]string, error)) func(*terraform.State) error {
	return func(s *terraform.State) error { return agrees(s, name, get) }
}

func agrees(s *terraform.State, name string, get func() (map[string]string, error)) error {
	want, err := get()
	if err != nil {
		return fmt.Errorf("%s: asking the API: %w", name, err)
	}
	if len(want) == 0 {
		return fmt.Errorf("%s: the API says nothing of it", name)
	}
	for k, v := range want {
		got, err := attr(s, name, k)
		if err != nil && v != "" { // "": null in the API, absent from the state
			return err
		}
		if got != v {
			return fmt.Errorf("%s: %s is %q in the state, %q in the API", name, k, got, v)
		}
	}
	return nil
}

// gone is a CheckDestroy: every resource of typ in the state is asked for through
// exists, and none may be there.
func gone(typ string, exists func(id int64) (bool, error)) func(*terraform.State) error {
	return func(s *terraform.State) error {
		for name, rs := range s.RootModule().Resources {
			if rs.Type != typ {
				continue
			}
			id, err := strconv.ParseInt(rs.Primary.ID, 10, 64)
			if err != nil {
				return fmt.Errorf("%s: id %q", name, rs.Primary.ID)
			}
			ok, err := exists(id)
			if err != nil {
				return fmt.Errorf("%s: asking the API: %w", name, err)
			}
			if ok {
				return fmt.Errorf("%s (id %d) still exists in Berth after destroy", name, id)
			}
		}
		return nil
	}
}

// inList reports whether a list holds an item of id.
func inList[T any](list func(context.Context) ([]T, error), key func(T) int64) func(int64) (bool, error) {
	return func(id int64) (bool, error) {
		all, err := list(context.Background())
		if err != nil {
			return false, err
		}
		for _, v := range all {
			if key(v) == id {
				return true, nil
			}
		}
		return false, nil
	}
}

// message is a catalog message in a language (with its arguments), as a regexp matching it in OpenTofu's
// output (which wraps long lines).
func message(t *testing.T, lang, id string, args map[string]any) *regexp.Regexp {
	t.Helper()
	msg := i18n.MustLoad().T(lang, id, args)
	if msg == "" || msg == id {
		t.Fatalf("no message %s in %s", id, lang)
	}
	return wrapped(msg)
}

// onAttribute matches OpenTofu's report of an error msg on the attribute attr of the
// resource name: it quotes the attribute's line of the configuration.
func onAttribute(name, attr string, msg *regexp.Regexp) *regexp.Regexp {
	return regexp.MustCompile(`(?s)with ` + regexp.QuoteMeta(name) + `,\s+on \S+ line \d+, in resource[^\n]*\n\s*\d+:\s+` +
		regexp.QuoteMeta(attr) + `\s+=.*?` + msg.String())
}

// wrapped matches text in OpenTofu's output, where a space may be a line break.
func wrapped(text string) *regexp.Regexp {
	words := strings.Fields(text)
	for i, w := range words {
		words[i] = regexp.QuoteMeta(w)
	}
	return regexp.MustCompile(strings.Join(words, `\s+`))
}

// hcl writes a block given on one line with its arguments separated by "; " as
// HCL wants it, one argument a line, after a blank line.
func hcl(oneLine string) string {
	open, rest, _ := strings.Cut(oneLine, "{ ")
	body, tail, _ := strings.Cut(rest, " }")
	return "\n" + open + "{\n  " + strings.ReplaceAll(body, "; ", "\n  ") + "\n}" + tail + "\n"
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func isNotFound(err error) bool { return errors.Is(err, client.ErrNotFound) }
