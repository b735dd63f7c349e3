package tfprovider_test

import (
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/berthhq/berth/client"
)

// volumeAPI is what the API says of volume id, as the attributes spell it (its
// location by name); nil when there is no such volume.
func (a *acc) volumeAPI(id int64) (map[string]string, error) {
	v, err := a.c.GetVolume(a.ctx(), client.ID(id))
	if isNotFound(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	locs, err := a.c.ListLocations(a.ctx())
	if err != nil {
		return nil, err
	}
	m := map[string]string{"name": v.Name, "size_gb": strconv.Itoa(v.SizeGB), "server_id": idText(v.ServerID),
		"project_id": idText(v.ProjectID), "format": deref(v.Format), "status": v.Status,
		"linux_device": v.LinuxDevice, "created_at": rfc3339(v.CreatedAt)}
	for _, l := range locs {
		if l.ID == v.LocationID {
			m["location"] = l.Name
		}
	}
	return m, nil
}

// volumeAgrees checks a volume in the state against the API (but the server it is
// attached to, when skipServer: an attachment made after the volume in the same
// apply is seen by the next refresh).
func (a *acc) volumeAgrees(name string, skipServer bool) resource.TestCheckFunc {
	return apiAgrees(name, func(id int64) (map[string]string, error) {
		m, err := a.volumeAPI(id)
		if err == nil && m == nil {
			err = fmt.Errorf("no volume %d", id)
		}
		if skipServer {
			delete(m, "server_id")
		}
		return m, err
	})
}

// attachedTo checks in the API that the volume of the state's resource vol is
// attached to the server of the state's resource srv.
func (a *acc) attachedTo(vol, srv string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		vid, err := idOf(s, vol)
		if err != nil {
			return err
		}
		sid, err := idOf(s, srv)
		if err != nil {
			return err
		}
		v, err := a.c.GetVolume(a.ctx(), client.ID(vid))
		if err != nil {
			return err
		}
		if v.ServerID == nil || *v.ServerID != sid || v.Operation != nil || v.Status != "available" {
			return fmt.Errorf("volume %d: attached to %s, operation %v, %s; want attached to %d", vid, idText(v.ServerID), v.Operation, v.Status, sid)
		}
		return nil
	}
}

func (a *acc) volumeGone() resource.TestCheckFunc {
	return gone("berth_volume", func(id int64) (bool, error) {
		m, err := a.volumeAPI(id)
		return m != nil, err
	})
}

// detach detaches volume id through the API and waits for it, as a change outside
// Terraform.
func (a *acc) detach(id int64) {
	a.t.Helper()
	v, err := a.c.DetachVolume(a.ctx(), client.ID(id))
	if err == nil {
		_, err = a.c.WaitOperation(a.ctx(), v.Operation.ID)
	}
	if err != nil {
		a.t.Fatalf("detaching volume %d through the API: %v", id, err)
	}
}

// sameVolume is sameServer for volumes.
func sameVolume(name string, id *int64, same bool) resource.TestCheckFunc {
	return sameServer(name, id, same)
}

func expect(name string, action plancheck.ResourceActionType) resource.ConfigPlanChecks {
	return resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(name, action)},
		PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}
}

// TestAccVolume: a volume made in a location and attached by berth_volume_attachment
// with automount, read by the data source; the volume imported by id and by name,
// the attachment by volume/server and by the volume alone; renamed, moved out of its
// project and grown in place; a shrink refused at plan time; a detachment outside
// Terraform attached again; a new format replaces the volume (and its attachment); a
// volume deleted outside Terraform made again; every plan after an apply empty.
func TestAccVolume(t *testing.T) {
	a := newAcc(t, "en")
	const x, att = "berth_volume.x", "berth_volume_attachment.a"
	config := func(volume string) string {
		return a.config(hcl(`resource "berth_project" "p" { name = "p" }`) +
			hcl(`resource "berth_server" "s" { location = "fsn1"; plan = "s1-1c-1g"; image = "debian-12" }`) +
			hcl(`resource "berth_volume" "x" { `+volume+` }`) +
			hcl(`resource "berth_volume_attachment" "a" { volume_id = berth_volume.x.id; server_id = berth_server.s.id; automount = true }`) +
			hcl(`data "berth_volume" "by_name" { name = berth_volume.x.name; depends_on = [berth_volume_attachment.a] }`))
	}
	first := config(`name = "data"; size_gb = 10; location = "fsn1"; format = "ext4"; project_id = berth_project.p.id`)
	grown := config(`name = "data2"; size_gb = 20; location = "fsn1"; format = "ext4"`)
	var id int64
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.providers(),
		CheckDestroy:             a.volumeGone(),
		Steps: slices.Concat([]resource.TestStep{
			{
				Config:           first,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check: resource.ComposeAggregateTestCheckFunc(a.volumeAgrees(x, true), sameVolume(x, &id, true),
					a.attachedTo(x, "berth_server.s"),
					resource.TestCheckResourceAttr(x, "status", "available"),
					resource.TestCheckResourceAttr(x, "location", "fsn1"),
					resource.TestCheckResourceAttrPair(x, "project_id", "berth_project.p", "id"),
					resource.TestCheckResourceAttr(att, "automount", "true"),
					func(s *terraform.State) error {
						return dataAgrees("data.berth_volume.by_name", func() (map[string]string, error) {
							m, err := a.volumeAPI(id)
							if m != nil {
								m["id"] = strconv.FormatInt(id, 10)
							}
							return m, err
						})(s)
					}),
			},
		}, volumeImportSteps(a, &id), []resource.TestStep{
			{
				Config:           grown,
				ConfigPlanChecks: expect(x, plancheck.ResourceActionUpdate),
				Check: resource.ComposeAggregateTestCheckFunc(a.volumeAgrees(x, false), sameVolume(x, &id, true),
					a.attachedTo(x, "berth_server.s"),
					resource.TestCheckResourceAttr(x, "size_gb", "20"),
					resource.TestCheckNoResourceAttr(x, "project_id")),
			},
		}, volumeChangeSteps(t, a, config, grown, &id)),
	})
}

// volumeImportSteps are TestAccVolume's imports: the volume by id and by name, the
// attachment by volume/server and by the volume's id alone.
func volumeImportSteps(a *acc, id *int64) []resource.TestStep {
	const x, att = "berth_volume.x", "berth_volume_attachment.a"
	return []resource.TestStep{
		// The apply wrote the volume before the attachment was made: a refresh shows
		// the server it is attached to.
		{RefreshState: true, Check: resource.ComposeAggregateTestCheckFunc(a.volumeAgrees(x, false),
			resource.TestCheckResourceAttrPair(x, "server_id", "berth_server.s", "id"))},
		{ResourceName: x, ImportState: true, ImportStateVerify: true},
		{ResourceName: x, ImportState: true, ImportStateVerify: true, ImportStateId: "data"},
		{
			ResourceName: att, ImportState: true, ImportStateVerify: true, ImportStateVerifyIgnore: []string{"automount"},
			ImportStateIdFunc: func(s *terraform.State) (string, error) {
				srv, err := attr(s, "berth_server.s", "name")
				return "data/" + srv, err
			},
		},
		{
			ResourceName: att, ImportState: true, ImportStateVerify: true, ImportStateVerifyIgnore: []string{"automount"},
			ImportStateIdFunc: func(*terraform.State) (string, error) { return strconv.FormatInt(*id, 10), nil },
		},
	}
}

// volumeChangeSteps are TestAccVolume's steps after the growth: a shrink, a
// detachment outside Terraform, a new format, a deletion outside Terraform.
func volumeChangeSteps(t *testing.T, a *acc, config func(string) string, grown string, id *int64) []resource.TestStep {
	const x, att = "berth_volume.x", "berth_volume_attachment.a"
	reformatted := config(`name = "data2"; size_gb = 20; location = "fsn1"; format = "xfs"`)
	return []resource.TestStep{
		{
			Config:   config(`name = "data2"; size_gb = 10; location = "fsn1"; format = "ext4"`),
			PlanOnly: true,
			ExpectError: onAttribute(x, "size_gb", message(t, "en", "validation.volume_grow_only",
				map[string]any{"size": 20})),
		},
		{
			PreConfig:        func() { a.detach(*id) },
			Config:           grown,
			ConfigPlanChecks: expect(att, plancheck.ResourceActionCreate),
			Check:            resource.ComposeAggregateTestCheckFunc(sameVolume(x, id, true), a.attachedTo(x, "berth_server.s")),
		},
		{
			Config:           reformatted,
			ConfigPlanChecks: expect(x, plancheck.ResourceActionDestroyBeforeCreate),
			Check: resource.ComposeAggregateTestCheckFunc(sameVolume(x, id, false), a.volumeAgrees(x, true),
				a.attachedTo(x, "berth_server.s"), resource.TestCheckResourceAttr(x, "format", "xfs")),
		},
		{
			PreConfig: func() {
				a.detach(*id)
				if err := a.c.DeleteVolume(a.ctx(), client.ID(*id)); err != nil {
					t.Fatalf("deleting volume %d through the API: %v", *id, err)
				}
			},
			Config:           reformatted,
			ConfigPlanChecks: expect(x, plancheck.ResourceActionCreate),
			Check: resource.ComposeAggregateTestCheckFunc(sameVolume(x, id, false), a.volumeAgrees(x, true),
				a.attachedTo(x, "berth_server.s")),
		},
	}
}

// TestAccVolumeOnServer: a volume made on a server (its location read from it) is
// kept attached there: a detachment outside Terraform is undone in place, a new
// server_id moves it in place; destroying it detaches it first. A name Berth refuses
// is an error on name in the account's language.
func TestAccVolumeOnServer(t *testing.T) {
	a := newAcc(t, "de")
	const x = "berth_volume.x"
	servers := hcl(`resource "berth_server" "s" { location = "hel1"; plan = "s1-1c-1g"; image = "debian-12" }`) +
		hcl(`resource "berth_server" "t" { location = "hel1"; plan = "s1-1c-1g"; image = "debian-12" }`)
	on := func(server string) string {
		return a.config(servers + hcl(`resource "berth_volume" "x" { name = "scratch"; size_gb = 10; server_id = `+server+`.id }`))
	}
	var id int64
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.providers(),
		CheckDestroy:             a.volumeGone(),
		Steps: []resource.TestStep{
			{
				Config:           on("berth_server.s"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check: resource.ComposeAggregateTestCheckFunc(a.volumeAgrees(x, false), sameVolume(x, &id, true),
					a.attachedTo(x, "berth_server.s"), resource.TestCheckResourceAttr(x, "location", "hel1"),
					resource.TestCheckNoResourceAttr(x, "format")),
			},
			{ResourceName: x, ImportState: true, ImportStateVerify: true},
			{
				PreConfig:        func() { a.detach(id) },
				Config:           on("berth_server.s"),
				ConfigPlanChecks: expect(x, plancheck.ResourceActionUpdate),
				Check: resource.ComposeAggregateTestCheckFunc(a.volumeAgrees(x, false), sameVolume(x, &id, true),
					a.attachedTo(x, "berth_server.s")),
			},
			{
				Config:           on("berth_server.t"),
				ConfigPlanChecks: expect(x, plancheck.ResourceActionUpdate),
				Check: resource.ComposeAggregateTestCheckFunc(a.volumeAgrees(x, false), sameVolume(x, &id, true),
					a.attachedTo(x, "berth_server.t")),
			},
			{
				Config:      on("berth_server.t") + hcl(`resource "berth_volume" "y" { name = "Bad_Name"; size_gb = 10; location = "hel1" }`),
				ExpectError: onAttribute("berth_volume.y", "name", message(t, "de", "validation.volume_name_chars", nil)),
			},
		},
	})
}
