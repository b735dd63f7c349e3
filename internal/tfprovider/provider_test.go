package tfprovider_test

import (
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
	"github.com/berthhq/berth/internal/tfprovider"
)

// TestAccProviderToken: a token Berth does not accept fails when the provider is
// configured, on the token argument, with the API's message; so does no token.
func TestAccProviderToken(t *testing.T) {
	a := newAcc(t, "en")
	provider := func(token string) string {
		return fmt.Sprintf("provider \"berth\" {\n  url   = %q\n  token = %q\n}\n", a.env.URL, token) +
			"\n" + `data "berth_account" "me" {}` + "\n"
	}
	t.Setenv(tfprovider.EnvToken, "") // not the fallback of an empty token
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: a.providers(),
		Steps: []resource.TestStep{
			{
				Config: provider("berth_not_a_token"),
				ExpectError: regexp.MustCompile(`(?s)Berth did not accept the API token.*token\s+=.*` +
					message(t, "en", "error.unauthenticated", nil).String() + `.*` + tfprovider.EnvToken),
			},
			{Config: provider(""), ExpectError: regexp.MustCompile(`No Berth API token`)},
		},
	})
}

// TestAccProviderEnvironment: without url and token in the configuration the
// provider takes BERTH_URL and BERTH_TOKEN, as the CLI does.
func TestAccProviderEnvironment(t *testing.T) {
	a := newAcc(t, "en")
	t.Setenv(tfprovider.EnvURL, a.env.URL)
	t.Setenv(tfprovider.EnvToken, a.acct.Token)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: a.providers(),
		Steps: []resource.TestStep{{
			Config: "\n" + `data "berth_account" "me" {}` + "\n",
			Check:  resource.TestCheckResourceAttr("data.berth_account.me", "id", strconv.FormatInt(a.acct.ID, 10)),
		}},
	})
}

// recorder is a testing.T for terraform-plugin-testing that records failures instead
// of failing the test it runs in: a test of the tests.
type recorder struct {
	*testing.T // Helper, Log, Logf, Name, Cleanup
	mu         sync.Mutex
	failures   []string
}

func (r *recorder) fail(s string) {
	r.mu.Lock()
	r.failures = append(r.failures, s)
	r.mu.Unlock()
}
func (r *recorder) Error(args ...any)                 { r.fail(fmt.Sprint(args...)) }
func (r *recorder) Errorf(format string, args ...any) { r.fail(fmt.Sprintf(format, args...)) }
func (r *recorder) Fail()                             { r.fail("Fail") }
func (r *recorder) FailNow()                          { r.fail("FailNow"); runtime.Goexit() }
func (r *recorder) Fatal(args ...any)                 { r.Error(args...); runtime.Goexit() }
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...); runtime.Goexit() }
func (r *recorder) Failed() bool                      { r.mu.Lock(); defer r.mu.Unlock(); return len(r.failures) > 0 }
func (r *recorder) Parallel()                         {}
func (r *recorder) Skip(args ...any)                  { r.fail("skipped: " + fmt.Sprint(args...)); runtime.Goexit() }
func (r *recorder) SkipNow()                          { r.Skip() }
func (r *recorder) Skipf(format string, args ...any)  { r.Skip(fmt.Sprintf(format, args...)) }
func (r *recorder) Skipped() bool                     { return false }

// failures runs tc and returns how it failed.
func failures(t *testing.T, tc resource.TestCase) string {
	r := &recorder{T: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		resource.Test(r, tc)
	}()
	<-done
	return strings.Join(r.failures, "\n")
}

// TestAccChecksCanFail: the checks ask the API, not the state: a project renamed
// through the API behind OpenTofu's back fails apiAgrees, and a project still in
// Berth fails the CheckDestroy gone.
func TestAccChecksCanFail(t *testing.T) {
	a := newAcc(t, "en")
	t.Parallel()
	var id int64
	got := failures(t, resource.TestCase{
		ProtoV6ProviderFactories: a.providers(),
		Steps: []resource.TestStep{{
			Config: a.config(hcl(`resource "berth_project" "x" { name = "web" }`)),
			Check: resource.ComposeAggregateTestCheckFunc(
				func(s *terraform.State) (err error) {
					if id, err = idOf(s, "berth_project.x"); err == nil {
						_, err = a.c.UpdateProject(a.ctx(), id, api.ProjectWrite{Name: client.Ptr("renamed")})
					}
					return err
				},
				apiAgrees("berth_project.x", func(id int64) (map[string]string, error) {
					ps, err := a.c.ListProjects(a.ctx())
					for _, p := range ps {
						if p.ID == id {
							return map[string]string{"name": p.Name}, nil
						}
					}
					return nil, err
				})),
		}},
	})
	if want := `berth_project.x: name is "web" in the state, "renamed" in the API`; !strings.Contains(got, want) {
		t.Errorf("a check of a project renamed behind OpenTofu's back: failures %q, want %q", got, want)
	}

	p, err := a.c.CreateProject(a.ctx(), api.ProjectWrite{Name: client.Ptr("kept")})
	if err != nil {
		t.Fatal(err)
	}
	state := &terraform.State{Modules: []*terraform.ModuleState{{Path: []string{"root"}, Resources: map[string]*terraform.ResourceState{
		"berth_project.kept": {Type: "berth_project", Primary: &terraform.InstanceState{ID: strconv.FormatInt(p.ID, 10)}},
	}}}}
	err = gone("berth_project", inList(a.c.ListProjects, func(p api.Project) int64 { return p.ID }))(state)
	if err == nil || !strings.Contains(err.Error(), "still exists") {
		t.Errorf("CheckDestroy of a project still in Berth: %v", err)
	}
}
