package tfprovider_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/berthhq/berth/client"
)

// The default catalog's licenses (internal/catalog/default.yaml): the image
// windows-server-2022 (fsn1 only) requires windows-server-standard; cpanel-solo comes
// from a key pool, empty until keys are added.
const (
	licWindows = 1
	licCPanel  = 2
	licPlesk   = 3
)

// addLicenseKeys fills cpanel-solo's key pool, as `berthd admin license keys add` does.
func (a *acc) addLicenseKeys(keys ...string) {
	a.t.Helper()
	if _, err := a.env.App.Service.AddLicenseKeys(context.Background(), licCPanel, keys); err != nil {
		a.t.Fatal(err)
	}
}

// licensesAre checks in the API which license products the server in the state
// holds (pending or active) and which it lists cancelled.
func (a *acc) licensesAre(name string, held, cancelled []int64) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		id, err := idOf(s, name)
		if err != nil {
			return err
		}
		all, err := a.c.ListServerLicenses(a.ctx(), client.ID(id))
		if err != nil {
			return err
		}
		var gotHeld, gotCancelled []int64
		for _, l := range all {
			switch l.Status {
			case client.LicensePending, client.LicenseActive:
				gotHeld = append(gotHeld, l.LicenseID)
			case client.LicenseCancelled:
				gotCancelled = append(gotCancelled, l.LicenseID)
			default:
				return fmt.Errorf("%s: license %d is %s", name, l.LicenseID, l.Status)
			}
		}
		slices.Sort(gotHeld)
		slices.Sort(gotCancelled)
		if !slices.Equal(gotHeld, held) || !slices.Equal(gotCancelled, cancelled) {
			return fmt.Errorf("%s: the API lists held %v and cancelled %v, want %v and %v", name, gotHeld, gotCancelled, held, cancelled)
		}
		return nil
	}
}

// licensesInState checks the state's licenses of a server: exactly ids.
func licensesInState(name string, ids ...int64) resource.TestCheckFunc {
	checks := []resource.TestCheckFunc{resource.TestCheckResourceAttr(name, "licenses.#", strconv.Itoa(len(ids)))}
	for _, id := range ids {
		checks = append(checks, resource.TestCheckTypeSetElemAttr(name, "licenses.*", strconv.FormatInt(id, 10)))
	}
	return resource.ComposeAggregateTestCheckFunc(checks...)
}

func planned(name string, action plancheck.ResourceActionType) resource.ConfigPlanChecks {
	return resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(name, action)}}
}

// TestAccServerLicenses: a server ordered with a license (given by the data
// source's id), another added in place and the first removed in place (an update,
// the same server; Berth lists the removed one cancelled, the state no longer has
// it), imported with its licenses, unset (no change: it shows what the server holds),
// emptied, destroyed.
func TestAccServerLicenses(t *testing.T) {
	a := newAcc(t, "en")
	a.addLicenseKeys("cpanel-key-1", "cpanel-key-2")
	const x = "berth_server.x"
	data := hcl(`data "berth_license" "plesk" { name = "plesk-web-admin" }`) + hcl(`data "berth_license" "cpanel" { id = "2" }`)
	base := `location = "fsn1"; plan = "s1-1c-1g"; image = "debian-12"`
	var id int64
	var ops int
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.providers(),
		CheckDestroy:             a.serverGone(),
		Steps: []resource.TestStep{
			{
				Config: a.config(data + server(base+`; licenses = [data.berth_license.plesk.id]`)),
				Check: resource.ComposeAggregateTestCheckFunc(a.serverAgrees(x), sameServer(x, &id, true),
					licensesInState(x, licPlesk), a.licensesAre(x, []int64{licPlesk}, nil),
					a.operations(x, &ops, "provision")),
			},
			{
				Config:           a.config(data + server(base+`; licenses = [data.berth_license.plesk.id, data.berth_license.cpanel.id]`)),
				ConfigPlanChecks: planned(x, plancheck.ResourceActionUpdate),
				Check: resource.ComposeAggregateTestCheckFunc(a.serverAgrees(x), sameServer(x, &id, true),
					licensesInState(x, licCPanel, licPlesk), a.licensesAre(x, []int64{licCPanel, licPlesk}, nil),
					a.operations(x, &ops)),
			},
			{
				Config:           a.config(data + server(base+`; licenses = [data.berth_license.cpanel.id]`)),
				ConfigPlanChecks: planned(x, plancheck.ResourceActionUpdate),
				Check: resource.ComposeAggregateTestCheckFunc(sameServer(x, &id, true),
					licensesInState(x, licCPanel), a.licensesAre(x, []int64{licCPanel}, []int64{licPlesk})),
			},
			{ResourceName: x, ImportState: true, ImportStateVerify: true},
			{
				// Unset: the state shows what the server holds, and nothing changes.
				Config:           a.config(data + server(base)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check:            resource.ComposeAggregateTestCheckFunc(licensesInState(x, licCPanel), a.licensesAre(x, []int64{licCPanel}, []int64{licPlesk})),
			},
			{
				Config:           a.config(data + server(base+`; licenses = []`)),
				ConfigPlanChecks: planned(x, plancheck.ResourceActionUpdate),
				Check: resource.ComposeAggregateTestCheckFunc(sameServer(x, &id, true),
					licensesInState(x), a.licensesAre(x, nil, []int64{licCPanel, licPlesk})),
			},
		},
	})
}

// TestAccServerImageLicense: the license an image requires, which Berth adds itself,
// makes no diff when the configuration leaves it out (ordered, after an import, and
// after a reinstall to that image); listed and then taken out of the list, its
// removal is asked for and Berth's 422 is the error, on the attribute licenses; a
// reinstall to another image (in place) drops it, a reinstall back brings it again.
func TestAccServerImageLicense(t *testing.T) {
	a := newAcc(t, "en")
	const x = "berth_server.x"
	windows := `location = "fsn1"; plan = "s2-2c-4g"; image = "windows-server-2022"`
	debian := `location = "fsn1"; plan = "s2-2c-4g"; image = "debian-12"`
	requires := regexp.MustCompile(`(?s)` + wrapped("Cannot remove the license windows-server-standard (id 1) from the server").String() +
		".*" + onAttribute(x, "licenses", wrapped("The server's image requires this license: reinstall another image to drop it.")).String())
	var id int64
	var ops int
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.providers(),
		CheckDestroy:             a.serverGone(),
		Steps: []resource.TestStep{
			{
				// Ordered with plesk only: Berth adds windows itself; the plan after the
				// apply (the framework's) is empty.
				Config: a.config(server(windows + `; licenses = [3]`)),
				Check: resource.ComposeAggregateTestCheckFunc(a.serverAgrees(x), sameServer(x, &id, true),
					licensesInState(x, licPlesk), a.licensesAre(x, []int64{licWindows, licPlesk}, nil),
					a.operations(x, &ops, "provision")),
			},
			{
				// Imported, the state has both licenses the server holds ...
				ResourceName: x, ImportState: true,
				ImportStateCheck: func(s []*terraform.InstanceState) error {
					if len(s) != 1 || s[0].Attributes["licenses.#"] != "2" {
						return fmt.Errorf("imported %+v, want the two licenses the server holds", s)
					}
					return nil
				},
			},
			{
				// ... and the configuration without windows is no change: an import
				// block's plan is a no-op.
				ResourceName: x, ImportState: true, ImportStateKind: resource.ImportBlockWithID,
			},
			{
				// Listed (with a change that makes it an apply) ...
				Config:           a.config(server(windows + `; licenses = [1, 3]; display_name = "listed"; allow_reinstall = true`)),
				ConfigPlanChecks: planned(x, plancheck.ResourceActionUpdate),
				Check: resource.ComposeAggregateTestCheckFunc(sameServer(x, &id, true), licensesInState(x, licWindows, licPlesk),
					a.licensesAre(x, []int64{licWindows, licPlesk}, nil)),
			},
			{
				// ... then taken out: its removal is refused.
				Config:      a.config(server(windows + `; licenses = [3]; display_name = "listed"; allow_reinstall = true`)),
				ExpectError: requires,
			},
			{
				// Reinstalled to debian: Berth cancels windows.
				Config:           a.config(server(debian + `; licenses = [3]; display_name = "listed"; allow_reinstall = true`)),
				ConfigPlanChecks: planned(x, plancheck.ResourceActionUpdate),
				Check: resource.ComposeAggregateTestCheckFunc(a.serverAgrees(x), sameServer(x, &id, true),
					licensesInState(x, licPlesk), a.licensesAre(x, []int64{licPlesk}, []int64{licWindows}),
					a.operations(x, &ops, "reinstall")),
			},
			{
				// And back: Berth adds it again; no diff after.
				Config:           a.config(server(windows + `; licenses = [3]; display_name = "listed"; allow_reinstall = true`)),
				ConfigPlanChecks: planned(x, plancheck.ResourceActionUpdate),
				Check: resource.ComposeAggregateTestCheckFunc(a.serverAgrees(x), sameServer(x, &id, true),
					licensesInState(x, licPlesk), a.licensesAre(x, []int64{licWindows, licPlesk}, []int64{licWindows}),
					a.operations(x, &ops, "reinstall")),
			},
		},
	})
}

// TestAccLicenseDataSource: berth_license by name and by id reads what the API says;
// a server whose licenses are unset shows those it holds (here its image's); a name
// Berth does not sell is an error on its attribute that lists those it sells.
func TestAccLicenseDataSource(t *testing.T) {
	a := newAcc(t, "en")
	lics, err := a.c.ListLicenses(a.ctx())
	if err != nil {
		t.Fatal(err)
	}
	licenseAPI := func(id int64) func() (map[string]string, error) {
		return func() (map[string]string, error) {
			for _, l := range lics {
				if l.ID == id {
					m := map[string]string{"id": strconv.FormatInt(l.ID, 10), "name": l.Name, "vendor": l.Vendor, "per": l.Per,
						"price_monthly": l.PriceMonthly, "in_stock": strconv.FormatBool(l.InStock),
						"image_ids.#": strconv.Itoa(len(l.ImageIDs))}
					return m, nil
				}
			}
			return nil, fmt.Errorf("no license %d", id)
		}
	}
	var sold []string
	for _, l := range lics {
		sold = append(sold, fmt.Sprintf("%s (id %d)", l.Name, l.ID))
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.providers(),
		CheckDestroy:             a.serverGone(),
		Steps: []resource.TestStep{
			{
				Config:   a.config(hcl(`data "berth_license" "x" { name = "oracle-db" }`)),
				PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)with data.berth_license.x,.*name\s+=.*` +
					wrapped(`Berth sells no license "oracle-db". It sells: `+strings.Join(sold, ", ")+".").String()),
			},
			{
				Config:      a.config(hcl(`data "berth_license" "x" { id = "3"; name = "plesk-web-admin" }`)),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`Invalid Attribute Combination`),
			},
			{
				Config: a.config(hcl(`data "berth_license" "windows" { name = "windows-server-standard" }`) +
					hcl(`data "berth_license" "cpanel" { id = "2" }`) +
					hcl(`resource "berth_server" "w" { location = "fsn1"; plan = "s2-2c-4g"; image = "windows-server-2022" }`)),
				Check: resource.ComposeAggregateTestCheckFunc(
					dataAgrees("data.berth_license.windows", licenseAPI(licWindows)),
					dataAgrees("data.berth_license.cpanel", licenseAPI(licCPanel)),
					resource.TestCheckResourceAttr("data.berth_license.windows", "per", client.LicensePerVCPU),
					resource.TestCheckTypeSetElemAttr("data.berth_license.windows", "image_ids.*", "5"),
					resource.TestCheckResourceAttr("data.berth_license.cpanel", "in_stock", "false"),
					licensesInState("berth_server.w", licWindows), a.licensesAre("berth_server.w", []int64{licWindows}, nil)),
			},
		},
	})
}

// TestAccServerLicenseRefused: a license id Berth does not sell is an error at plan
// time on the attribute licenses, in the account's language, listing those it
// sells; one out of stock is Berth's 422 at the order, on the same attribute, and no
// server is made.
func TestAccServerLicenseRefused(t *testing.T) {
	a := newAcc(t, "de")
	lics, err := a.c.ListLicenses(a.ctx())
	if err != nil {
		t.Fatal(err)
	}
	var sold []string
	for _, l := range lics {
		sold = append(sold, fmt.Sprintf("%s (id %d)", l.Name, l.ID))
	}
	const x = "berth_server.x"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.providers(),
		CheckDestroy:             a.serverGone(),
		Steps: []resource.TestStep{
			{
				Config:   a.config(server(`location = "fsn1"; plan = "s1-1c-1g"; image = "debian-12"; licenses = [3, 99]`)),
				PlanOnly: true,
				ExpectError: onAttribute(x, "licenses", message(t, "de", "terraform.no_license",
					map[string]any{"value": "99", "offered": strings.Join(sold, ", ")})),
			},
			{
				Config:      a.config(server(`location = "fsn1"; plan = "s1-1c-1g"; image = "debian-12"; licenses = [2]`)),
				ExpectError: onAttribute(x, "licenses", message(t, "de", "validation.license_out_of_stock", map[string]any{"name": "cpanel-solo"})),
			},
			{
				PreConfig: func() {
					all, err := a.c.ListServers(a.ctx(), client.ServerListOptions{})
					if err != nil || len(all) > 0 {
						t.Fatalf("servers after a refused order: %+v, %v", all, err)
					}
				},
				Config: a.config(""),
			},
		},
	})
}
