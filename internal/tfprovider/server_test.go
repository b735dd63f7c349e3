package tfprovider_test

import (
	"fmt"
	"regexp"
	"slices"
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

// serverAPI is what the API says of server id, as the resource's attributes spell it
// (names for location, plan, image and app); nil when there is no such server.
func (a *acc) serverAPI(id int64) (map[string]string, error) {
	ctx := a.ctx()
	srv, err := a.c.GetServer(ctx, client.ID(id))
	if isNotFound(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	locs, err := a.c.ListLocations(ctx)
	if err != nil {
		return nil, err
	}
	m := map[string]string{"name": srv.Name, "display_name": srv.DisplayName, "status": srv.Status,
		"vcpus": strconv.Itoa(srv.VCPUs), "memory_mb": strconv.Itoa(srv.MemoryMB), "disk_gb": strconv.Itoa(srv.DiskGB),
		"ipv4": deref(srv.IPv4), "ipv6": deref(srv.IPv6), "created_at": rfc3339(srv.CreatedAt),
		"project_id": idText(srv.ProjectID), "recipe_id": idText(srv.RecipeID),
		"ssh_key_ids.#": strconv.Itoa(len(srv.SSHKeyIDs))}
	if len(srv.SSHKeyIDs) == 0 {
		m["ssh_key_ids.#"] = ""
	}
	switch srv.Status {
	case "running", "stopped":
		m["power_state"] = srv.Status
	}
	for _, l := range locs {
		if l.ID != srv.LocationID {
			continue
		}
		m["location"] = l.Name
		for _, p := range l.Plans {
			if p.ID == srv.PlanID {
				m["plan"] = p.Name
			}
		}
		for _, im := range l.Images {
			if im.ID == srv.ImageID && srv.AppID == nil {
				m["image"] = im.Name
			}
		}
	}
	m["app"] = ""
	if srv.AppID != nil {
		apps, err := a.c.ListApps(ctx)
		if err != nil {
			return nil, err
		}
		for _, ap := range apps {
			if ap.ID == *srv.AppID {
				m["app"], m["image"] = ap.Name, ""
			}
		}
	}
	return m, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func idText(id *int64) string {
	if id == nil {
		return ""
	}
	return strconv.FormatInt(*id, 10)
}

// serverAgrees checks a server in the state against the API.
func (a *acc) serverAgrees(name string) resource.TestCheckFunc {
	return apiAgrees(name, func(id int64) (map[string]string, error) {
		m, err := a.serverAPI(id)
		if err == nil && m == nil {
			err = fmt.Errorf("no server %d", id)
		}
		return m, err
	})
}

func (a *acc) serverGone() resource.TestCheckFunc {
	return gone("berth_server", func(id int64) (bool, error) {
		m, err := a.serverAPI(id)
		return m != nil, err
	})
}

// sameServer records a server's id in *id when *id is 0, and fails when it changed
// (same) or stayed (!same).
func sameServer(name string, id *int64, same bool) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		got, err := idOf(s, name)
		if err != nil {
			return err
		}
		if *id != 0 && (got == *id) != same {
			return fmt.Errorf("%s: id %d, before %d: want the same server %v", name, got, *id, same)
		}
		*id = got
		return nil
	}
}

// operations checks the types of the server's operations since the check last ran
// (oldest first), each ended in success.
func (a *acc) operations(name string, seen *int, want ...string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		id, err := idOf(s, name)
		if err != nil {
			return err
		}
		var got []string
		for op, err := range a.c.AllServerOperations(a.ctx(), client.ID(id), client.OperationListOptions{}) {
			if err != nil {
				return err
			}
			if op.Status != "success" {
				return fmt.Errorf("%s: operation %d (%s) is %s", name, op.ID, op.Type, op.Status)
			}
			got = append(got, op.Type)
		}
		slices.Reverse(got)
		if *seen > len(got) {
			*seen = 0 // another server
		}
		got, *seen = got[*seen:], len(got)
		if !slices.Equal(got, want) {
			return fmt.Errorf("%s: operations %v, want %v", name, got, want)
		}
		return nil
	}
}

func server(args string) string {
	return hcl(`resource "berth_server" "x" { ` + args + ` }`)
}

// TestAccServer: a server's whole life: ordered by names with a key and a project,
// imported by id and by name, renamed, moved out of its project and rescaled (a
// running server is stopped for it and started again) in place, stopped, refused a
// plan whose disk is too small at plan time, reinstalled in place when allowed,
// replaced when not, moved to another location by replacement, deleted through the
// API and planned again, destroyed.
func TestAccServer(t *testing.T) {
	a := newAcc(t, "en")
	const x = "berth_server.x"
	deps := hcl(`resource "berth_ssh_key" "k" { name = "k"; public_key = "`+testenv.PublicKey(t)+" k@example"+`" }`) +
		hcl(`resource "berth_project" "p" { name = "p" }`)
	var id int64
	var ops int
	update := func(action plancheck.ResourceActionType) resource.ConfigPlanChecks {
		return resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(x, action)}}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.providers(),
		CheckDestroy:             a.serverGone(),
		Steps: []resource.TestStep{
			{
				Config: a.config(deps + server(`display_name = "web"; location = "fsn1"; plan = "s1-1c-1g"; image = "debian-12"; `+
					`project_id = berth_project.p.id; ssh_key_ids = [berth_ssh_key.k.id]; root_password = "correct horse"`)),
				Check: resource.ComposeAggregateTestCheckFunc(a.serverAgrees(x), sameServer(x, &id, true),
					resource.TestCheckResourceAttr(x, "status", "running"),
					resource.TestCheckResourceAttr(x, "plan", "s1-1c-1g"),
					resource.TestCheckResourceAttrPair(x, "project_id", "berth_project.p", "id"),
					resource.TestCheckTypeSetElemAttrPair(x, "ssh_key_ids.*", "berth_ssh_key.k", "id"),
					resource.TestCheckResourceAttrSet(x, "ipv4"),
					a.operations(x, &ops, "provision")),
			},
			{ResourceName: x, ImportState: true, ImportStateVerify: true, ImportStateVerifyIgnore: []string{"root_password"}},
			{
				ResourceName: x, ImportState: true, ImportStateVerify: true, ImportStateVerifyIgnore: []string{"root_password"},
				ImportStateIdFunc: func(s *terraform.State) (string, error) { return attr(s, x, "name") },
			},
			{
				Config: a.config(deps + server(`display_name = "web-2"; location = "fsn1"; plan = "s2-2c-4g"; upgrade_disk = true; `+
					`image = "debian-12"; ssh_key_ids = [berth_ssh_key.k.id]; root_password = "correct horse"`)),
				ConfigPlanChecks: update(plancheck.ResourceActionUpdate),
				Check: resource.ComposeAggregateTestCheckFunc(a.serverAgrees(x), sameServer(x, &id, true),
					resource.TestCheckResourceAttr(x, "status", "running"),
					resource.TestCheckResourceAttr(x, "disk_gb", "40"),
					resource.TestCheckNoResourceAttr(x, "project_id"),
					a.operations(x, &ops, "power", "rescale", "power")),
			},
			{
				Config: a.config(deps + server(`display_name = "web-2"; location = "fsn1"; plan = "s2-2c-4g"; image = "debian-12"; `+
					`ssh_key_ids = [berth_ssh_key.k.id]; root_password = "correct horse"; power_state = "stopped"`)),
				ConfigPlanChecks: update(plancheck.ResourceActionUpdate),
				Check: resource.ComposeAggregateTestCheckFunc(a.serverAgrees(x), sameServer(x, &id, true),
					resource.TestCheckResourceAttr(x, "status", "stopped"),
					a.operations(x, &ops, "power")),
			},
			{
				Config: a.config(deps + server(`display_name = "web-2"; location = "fsn1"; plan = "s1-1c-1g"; image = "debian-12"; `+
					`ssh_key_ids = [berth_ssh_key.k.id]; root_password = "correct horse"; power_state = "stopped"`)),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)plan = "s1-1c-1g".*Plan s1-1c-1g has a 25 GB disk, smaller than the 40\s+GB disk`),
			},
			{
				Config: a.config(deps + server(`display_name = "web-2"; location = "fsn1"; plan = "s2-2c-4g"; image = "ubuntu-24.04"; `+
					`allow_reinstall = true; ssh_key_ids = [berth_ssh_key.k.id]; root_password = "correct horse"; power_state = "stopped"`)),
				ConfigPlanChecks: update(plancheck.ResourceActionUpdate),
				Check: resource.ComposeAggregateTestCheckFunc(a.serverAgrees(x), sameServer(x, &id, true),
					resource.TestCheckResourceAttr(x, "image", "ubuntu-24.04"),
					resource.TestCheckResourceAttr(x, "status", "stopped"),
					a.operations(x, &ops, "reinstall", "power")),
			},
			{
				Config: a.config(deps + server(`display_name = "web-2"; location = "fsn1"; plan = "s2-2c-4g"; image = "rocky-9"; `+
					`ssh_key_ids = [berth_ssh_key.k.id]; root_password = "correct horse"`)),
				ConfigPlanChecks: update(plancheck.ResourceActionDestroyBeforeCreate),
				Check: resource.ComposeAggregateTestCheckFunc(a.serverAgrees(x), sameServer(x, &id, false),
					resource.TestCheckResourceAttr(x, "image", "rocky-9"),
					resource.TestCheckResourceAttr(x, "status", "running")),
			},
			{
				Config: a.config(deps + server(`display_name = "web-2"; location = "hel1"; plan = "s2-2c-4g"; image = "rocky-9"; `+
					`ssh_key_ids = [berth_ssh_key.k.id]; root_password = "correct horse"`)),
				ConfigPlanChecks: update(plancheck.ResourceActionDestroyBeforeCreate),
				Check: resource.ComposeAggregateTestCheckFunc(a.serverAgrees(x), sameServer(x, &id, false),
					resource.TestCheckResourceAttr(x, "location", "hel1")),
			},
			{
				PreConfig: func() {
					if err := a.c.DeleteServer(a.ctx(), client.ID(id)); err != nil {
						t.Fatalf("deleting server %d through the API: %v", id, err)
					}
				},
				Config: a.config(deps + server(`display_name = "web-2"; location = "hel1"; plan = "s2-2c-4g"; image = "rocky-9"; `+
					`ssh_key_ids = [berth_ssh_key.k.id]; root_password = "correct horse"`)),
				ConfigPlanChecks: update(plancheck.ResourceActionCreate),
				Check:            resource.ComposeAggregateTestCheckFunc(a.serverAgrees(x), sameServer(x, &id, false)),
			},
		},
	})
}

// TestAccServerIDs: location, plan and image given by id are kept as ids (no
// perpetual diff), and switching between a name and its id changes nothing in Berth.
func TestAccServerIDs(t *testing.T) {
	a := newAcc(t, "en")
	const x = "berth_server.x"
	var id int64
	var ops int
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.providers(),
		CheckDestroy:             a.serverGone(),
		Steps: []resource.TestStep{
			{
				Config: a.config(server(`location = "1"; plan = "1"; image = "2"`)),
				Check: resource.ComposeAggregateTestCheckFunc(sameServer(x, &id, true), a.operations(x, &ops, "provision"),
					resource.TestCheckResourceAttr(x, "location", "1"), resource.TestCheckResourceAttr(x, "plan", "1"),
					resource.TestCheckResourceAttr(x, "image", "2")),
			},
			{
				Config: a.config(server(`location = "fsn1"; plan = "s1-1c-1g"; image = "debian-12"`)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(x, plancheck.ResourceActionUpdate)}},
				Check: resource.ComposeAggregateTestCheckFunc(a.serverAgrees(x), sameServer(x, &id, true), a.operations(x, &ops)),
			},
		},
	})
}

// TestAccServerApp: a server with a one-click app instead of an image; a change of
// app replaces it.
func TestAccServerApp(t *testing.T) {
	a := newAcc(t, "en")
	const x = "berth_server.x"
	var id int64
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.providers(),
		CheckDestroy:             a.serverGone(),
		Steps: []resource.TestStep{
			{
				Config: a.config(server(`location = "ash1"; plan = "s1-1c-1g"; app = "docker"`)),
				Check: resource.ComposeAggregateTestCheckFunc(a.serverAgrees(x), sameServer(x, &id, true),
					resource.TestCheckResourceAttr(x, "app", "docker"), resource.TestCheckNoResourceAttr(x, "image")),
			},
			{ResourceName: x, ImportState: true, ImportStateVerify: true},
			{
				Config: a.config(server(`location = "ash1"; plan = "s1-1c-1g"; app = "wordpress"`)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(x, plancheck.ResourceActionDestroyBeforeCreate)}},
				Check: resource.ComposeAggregateTestCheckFunc(a.serverAgrees(x), sameServer(x, &id, false)),
			},
		},
	})
}

// TestAccServerNotOffered: a location, plan, image or app Berth does not offer is an
// error at plan time, on its attribute, in the account's language, that names the
// value and lists what is offered (as the API lists it).
func TestAccServerNotOffered(t *testing.T) {
	a := newAcc(t, "de")
	locs, err := a.c.ListLocations(a.ctx())
	if err != nil {
		t.Fatal(err)
	}
	apps, err := a.c.ListApps(a.ctx())
	if err != nil {
		t.Fatal(err)
	}
	var hel1 api.Location
	var locNames, plans, images, appNames []string
	for _, l := range locs {
		locNames = append(locNames, fmt.Sprintf("%s (id %d)", l.Name, l.ID))
		if l.Name == "hel1" {
			hel1 = l
		}
	}
	for _, p := range hel1.Plans {
		plans = append(plans, fmt.Sprintf("%s (id %d)", p.Name, p.ID))
	}
	for _, im := range hel1.Images {
		images = append(images, fmt.Sprintf("%s (id %d)", im.Name, im.ID))
	}
	for _, ap := range apps {
		appNames = append(appNames, fmt.Sprintf("%s (id %d)", ap.Name, ap.ID))
	}
	refused := func(attr, id string, args map[string]any) *regexp.Regexp {
		return onAttribute("berth_server.x", attr, message(t, "de", id, args))
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.providers(),
		Steps: []resource.TestStep{
			{
				Config:      a.config(server(`location = "mars1"; plan = "s1-1c-1g"; image = "debian-12"`)),
				PlanOnly:    true,
				ExpectError: refused("location", "terraform.no_location", map[string]any{"value": "mars1", "offered": strings.Join(locNames, ", ")}),
			},
			{
				Config:      a.config(server(`location = "hel1"; plan = "s9-huge"; image = "debian-12"`)),
				PlanOnly:    true,
				ExpectError: refused("plan", "terraform.no_plan", map[string]any{"value": "s9-huge", "location": "hel1", "offered": strings.Join(plans, ", ")}),
			},
			{
				// fedora-41 exists, but not in hel1.
				Config:      a.config(server(`location = "hel1"; plan = "s1-1c-1g"; image = "fedora-41"`)),
				PlanOnly:    true,
				ExpectError: refused("image", "terraform.no_image", map[string]any{"value": "fedora-41", "location": "hel1", "offered": strings.Join(images, ", ")}),
			},
			{
				Config:      a.config(server(`location = "hel1"; plan = "s1-1c-1g"; app = "99"`)),
				PlanOnly:    true,
				ExpectError: refused("app", "terraform.no_app", map[string]any{"value": "99", "offered": strings.Join(appNames, ", ")}),
			},
			{
				Config:      a.config(server(`location = "hel1"; plan = "s1-1c-1g"; image = "debian-12"; app = "docker"`)),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Invalid Attribute Combination.*image.*app`),
			},
		},
	})
}
