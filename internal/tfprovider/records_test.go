package tfprovider_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
	"github.com/berthhq/berth/internal/testenv"
)

// recordTest is the life of one record resource: create, import by id and by name,
// a change (in place or a replacement, as wantOnChange says), drift (deleted through
// the API, planned to be created again), a 422 on the attribute it names, destroy.
type recordTest struct {
	typ                 string // berth_project
	first, second, dupe string // configurations of the resource "x" (dupe: x and a "y" Berth refuses)
	onChange            plancheck.ResourceActionType
	// api is the record's attributes as the API has them (nil: none of that id).
	api func(a *acc, id int64) (map[string]string, error)
	// del deletes the record through the API.
	del func(a *acc, id int64) error
	// refused is the message the 422 of dupe carries (in the account's language), on
	// the attribute refusedAttr of the resource "y".
	refused     *regexp.Regexp
	refusedAttr string
	// verifyIgnore are attributes an import cannot know.
	verifyIgnore []string
}

func (rt recordTest) run(t *testing.T, a *acc) {
	name := rt.typ + ".x"
	var firstID int64
	agrees := apiAgrees(name, func(id int64) (map[string]string, error) {
		m, err := rt.api(a, id)
		if err == nil && m == nil {
			err = fmt.Errorf("no %s %d", rt.typ, id)
		}
		return m, err
	})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.providers(),
		CheckDestroy: gone(rt.typ, func(id int64) (bool, error) {
			m, err := rt.api(a, id)
			return m != nil, err
		}),
		Steps: []resource.TestStep{
			{
				Config: a.config(rt.first),
				Check: resource.ComposeAggregateTestCheckFunc(agrees, func(s *terraform.State) (err error) {
					firstID, err = idOf(s, name)
					return err
				}),
			},
			{ResourceName: name, ImportState: true, ImportStateVerify: true, ImportStateVerifyIgnore: rt.verifyIgnore},
			{
				ResourceName: name, ImportState: true, ImportStateVerify: true, ImportStateVerifyIgnore: rt.verifyIgnore,
				ImportStateIdFunc: func(s *terraform.State) (string, error) { return attr(s, name, "name") },
			},
			{
				Config:           a.config(rt.second),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(name, rt.onChange)}},
				Check: resource.ComposeAggregateTestCheckFunc(agrees, func(s *terraform.State) error {
					id, err := idOf(s, name)
					if err == nil && (id == firstID) != (rt.onChange == plancheck.ResourceActionUpdate) {
						err = fmt.Errorf("%s: id %d after the change, %d before (%s)", name, id, firstID, rt.onChange)
					}
					firstID = id
					return err
				}),
			},
			{
				PreConfig: func() {
					if err := rt.del(a, firstID); err != nil {
						t.Fatalf("deleting %s %d through the API: %v", rt.typ, firstID, err)
					}
				},
				Config:           a.config(rt.second),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(name, plancheck.ResourceActionCreate)}},
				Check: resource.ComposeAggregateTestCheckFunc(agrees, func(s *terraform.State) error {
					if id, err := idOf(s, name); err != nil || id == firstID {
						return fmt.Errorf("%s: id %d after its deletion through the API (before: %d), %v", name, id, firstID, err)
					}
					return nil
				}),
			},
			{Config: a.config(rt.second + rt.dupe), ExpectError: onAttribute(rt.typ+".y", rt.refusedAttr, rt.refused)},
		},
	})
}

func TestAccProject(t *testing.T) {
	a := newAcc(t, "de")
	recordTest{
		typ:      "berth_project",
		first:    `resource "berth_project" "x" { name = "web" }`,
		second:   `resource "berth_project" "x" { name = "web-2" }`,
		dupe:     hcl(`resource "berth_project" "y" { name = "web-2" }`),
		onChange: plancheck.ResourceActionUpdate,
		api: func(a *acc, id int64) (map[string]string, error) {
			ps, err := a.c.ListProjects(a.ctx())
			for _, p := range ps {
				if p.ID == id {
					return map[string]string{"name": p.Name, "created_at": rfc3339(p.CreatedAt)}, nil
				}
			}
			return nil, err
		},
		del:     func(a *acc, id int64) error { return a.c.DeleteProject(a.ctx(), id) },
		refused: message(t, "de", "validation.name_taken", nil), refusedAttr: "name",
	}.run(t, a)
}

func TestAccRecipe(t *testing.T) {
	a := newAcc(t, "fr")
	recordTest{
		typ:      "berth_recipe",
		first:    hcl(`resource "berth_recipe" "x" { name = "motd"; script = "#!/bin/sh\necho hi > /etc/motd\n" }`),
		second:   hcl(`resource "berth_recipe" "x" { name = "motd-2"; script = "#!/bin/sh\necho bye > /etc/motd\n" }`),
		dupe:     hcl(`resource "berth_recipe" "y" { name = "empty"; script = "  " }`),
		onChange: plancheck.ResourceActionUpdate,
		api: func(a *acc, id int64) (map[string]string, error) {
			r, err := a.c.GetRecipe(a.ctx(), id)
			if isNotFound(err) {
				return nil, nil
			} else if err != nil {
				return nil, err
			}
			return map[string]string{"name": r.Name, "script": r.Script, "created_at": rfc3339(r.CreatedAt)}, nil
		},
		del:     func(a *acc, id int64) error { return a.c.DeleteRecipe(a.ctx(), id) },
		refused: message(t, "fr", "validation.required", nil), refusedAttr: "script",
	}.run(t, a)
}

func TestAccSSHKey(t *testing.T) {
	a := newAcc(t, "en")
	k1, k2 := testenv.PublicKey(t)+" one@example", testenv.PublicKey(t)+" two@example"
	recordTest{
		typ: "berth_ssh_key",
		// A trailing newline, as file("~/.ssh/id_ed25519.pub") gives: Berth keeps the
		// key without it, the state as configured, and the next plan is empty.
		first:    hcl(fmt.Sprintf(`resource "berth_ssh_key" "x" { name = "laptop"; public_key = "%s\n" }`, k1)),
		second:   hcl(fmt.Sprintf(`resource "berth_ssh_key" "x" { name = "laptop-2"; public_key = %q }`, k2)),
		dupe:     hcl(fmt.Sprintf(`resource "berth_ssh_key" "y" { name = "again"; public_key = %q }`, k2)),
		onChange: plancheck.ResourceActionDestroyBeforeCreate,
		api: func(a *acc, id int64) (map[string]string, error) {
			ks, err := a.c.ListSSHKeys(a.ctx())
			for _, k := range ks {
				if k.ID == id {
					return map[string]string{"name": k.Name, "fingerprint": k.Fingerprint, "created_at": rfc3339(k.CreatedAt)}, nil
				}
			}
			return nil, err
		},
		del:     func(a *acc, id int64) error { return a.c.DeleteSSHKey(a.ctx(), id) },
		refused: message(t, "en", "validation.ssh_key_duplicate", nil), refusedAttr: "public_key",
		verifyIgnore: []string{"public_key"}, // the import has Berth's spelling, without the newline
	}.run(t, a)
}

// TestAccSSHKeyImported (issue 26): a key stored outside Terraform and imported is
// the key of a configuration that reads it with file(), which ends in a newline
// Berth does not keep, or spells it with another comment or none: the plan after
// the import is empty. Another name, or another key, still replaces it, and the
// new key is stored as configured.
func TestAccSSHKeyImported(t *testing.T) {
	a := newAcc(t, "en")
	const name = "berth_ssh_key.k"
	k1, k2 := testenv.PublicKey(t), testenv.PublicKey(t)
	stored, err := a.c.CreateSSHKey(a.ctx(), api.SSHKeyCreate{Name: client.Ptr("laptop"), PublicKey: client.Ptr(k1 + " me@laptop")})
	if err != nil {
		t.Fatal(err)
	}
	pub := filepath.Join(t.TempDir(), "id_ed25519.pub")
	if err := os.WriteFile(pub, []byte(k1+" me@laptop\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	named := func(keyName, publicKey string) string {
		return a.config(hcl(`resource "berth_ssh_key" "k" { name = "` + keyName + `"; public_key = ` + publicKey + ` }`))
	}
	config := func(publicKey string) string { return named("laptop", publicKey) }
	replaced := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(name, plancheck.ResourceActionDestroyBeforeCreate)}}
	// holds checks that Berth has the one key, of name and publicKey, under another
	// id than before, and that the state has that id.
	lastID := stored.ID
	holds := func(keyName, publicKey string) resource.TestCheckFunc {
		return func(s *terraform.State) error {
			id, err := idOf(s, name)
			if err != nil || id == lastID {
				return fmt.Errorf("%s: id %d after the replacement, %d before (%v)", name, id, lastID, err)
			}
			lastID = id
			ks, err := a.c.ListSSHKeys(a.ctx())
			if err != nil {
				return err
			}
			if len(ks) != 1 || ks[0].ID != id || ks[0].Name != keyName || ks[0].PublicKey != publicKey {
				return fmt.Errorf("Berth has %+v, want the one key %d, %s, %s", ks, id, keyName, publicKey)
			}
			return nil
		}
	}
	same := func(s *terraform.State) error {
		if id, err := idOf(s, name); err != nil || id != stored.ID {
			return fmt.Errorf("%s: id %d, want the imported %d (%v)", name, id, stored.ID, err)
		}
		return nil
	}
	empty := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}
	agrees := apiAgrees(name, func(id int64) (map[string]string, error) {
		ks, err := a.c.ListSSHKeys(a.ctx())
		for _, k := range ks {
			if k.ID == id {
				return map[string]string{"name": k.Name, "fingerprint": k.Fingerprint, "created_at": rfc3339(k.CreatedAt)}, nil
			}
		}
		return nil, err
	})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.providers(),
		CheckDestroy:             gone("berth_ssh_key", inList(a.c.ListSSHKeys, func(k api.SSHKey) int64 { return k.ID })),
		Steps: []resource.TestStep{
			{
				// The import reads the key as Berth keeps it, as a refresh would.
				Config:       config(fmt.Sprintf("file(%q)", pub)),
				ResourceName: name, ImportState: true, ImportStateId: strconv.FormatInt(stored.ID, 10), ImportStatePersist: true,
				ImportStateCheck: func(is []*terraform.InstanceState) error {
					if len(is) != 1 {
						return fmt.Errorf("%d resources imported, want 1", len(is))
					}
					want := map[string]string{"id": strconv.FormatInt(stored.ID, 10), "name": "laptop",
						"public_key": stored.PublicKey, "fingerprint": stored.Fingerprint, "created_at": rfc3339(stored.CreatedAt)}
					for k, v := range want {
						if got := is[0].Attributes[k]; got != v {
							return fmt.Errorf("imported %s is %q, Berth has %q", k, got, v)
						}
					}
					return nil
				},
			},
			// The file as ssh-keygen writes it: a trailing newline.
			{Config: config(fmt.Sprintf("file(%q)", pub)), ConfigPlanChecks: empty, Check: resource.ComposeAggregateTestCheckFunc(same, agrees)},
			// No comment, and a Windows line end.
			{Config: config(fmt.Sprintf("%q", k1+"\r\n")), ConfigPlanChecks: empty, Check: same},
			// Another comment, and spaces around and between the parts.
			{Config: config(fmt.Sprintf("%q", "  "+strings.Replace(k1, " ", " \t ", 1)+"   me@desktop  \n")), ConfigPlanChecks: empty, Check: same},
			// A new name replaces the key: the new one has the configuration's spelling.
			{
				Config:           named("desktop", fmt.Sprintf("%q", k1+" me@desktop\n")),
				ConfigPlanChecks: replaced,
				Check:            resource.ComposeAggregateTestCheckFunc(agrees, holds("desktop", k1+" me@desktop")),
			},
			// Another key replaces it.
			{
				Config:           named("desktop", fmt.Sprintf("%q", k2+" me@desktop\n")),
				ConfigPlanChecks: replaced,
				Check:            resource.ComposeAggregateTestCheckFunc(agrees, holds("desktop", k2+" me@desktop")),
			},
		},
	})
}
