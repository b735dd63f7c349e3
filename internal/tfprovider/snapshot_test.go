package tfprovider_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

// snapshotAPI is snapshot id of server as the API lists it; nil when it is not
// listed (or the server is gone).
func (a *acc) snapshotAPI(server, id int64) (*api.Snapshot, error) {
	snaps, err := a.c.ListSnapshots(a.ctx(), client.ID(server))
	if isNotFound(err) {
		return nil, nil
	}
	for i, s := range snaps {
		if s.ID == id {
			return &snaps[i], nil
		}
	}
	return nil, err
}

// snapshotOf is the server id and snapshot id of a berth_snapshot in the state.
func snapshotOf(s *terraform.State, name string) (server, id int64, err error) {
	if id, err = idOf(s, name); err != nil {
		return 0, 0, err
	}
	v, err := attr(s, name, "server_id")
	if err != nil {
		return 0, 0, err
	}
	server, err = strconv.ParseInt(v, 10, 64)
	return server, id, err
}

// TestAccSnapshot: a snapshot is taken and waited for, imported by its id and by
// server/id, replaced by any change, taken again when deleted through the API,
// refused a reserved name on its attribute, and deleted with the configuration.
func TestAccSnapshot(t *testing.T) {
	a := newAcc(t, "en")
	const x = "berth_snapshot.x"
	srv := hcl(`resource "berth_server" "s" { location = "fsn1"; plan = "s1-1c-1g"; image = "debian-12" }`)
	snap := func(args string) string {
		return a.config(srv + hcl(`resource "berth_snapshot" "x" { server_id = berth_server.s.id; `+args+` }`))
	}
	var server, id int64
	agrees := func(s *terraform.State) error {
		sv, sid, err := snapshotOf(s, x)
		if err != nil {
			return err
		}
		return agrees(s, x, func() (map[string]string, error) {
			got, err := a.snapshotAPI(sv, sid)
			if err != nil || got == nil {
				return nil, err
			}
			return map[string]string{"name": got.Name, "include_memory": strconv.FormatBool(got.IncludeMemory),
				"size_gb": strconv.Itoa(got.SizeGB), "status": got.Status, "created_at": rfc3339(got.CreatedAt)}, nil
		})
	}
	remember := func(replaced bool) resource.TestCheckFunc {
		return func(s *terraform.State) error {
			sv, sid, err := snapshotOf(s, x)
			if err == nil && id != 0 && (sid != id) != replaced {
				err = fmt.Errorf("snapshot id %d, before %d: want replaced %v", sid, id, replaced)
			}
			server, id = sv, sid
			return err
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.providers(),
		CheckDestroy: func(s *terraform.State) error {
			got, err := a.snapshotAPI(server, id)
			if err == nil && got != nil {
				err = fmt.Errorf("snapshot %d of server %d is still there after destroy: %+v", id, server, got)
			}
			return err
		},
		Steps: []resource.TestStep{
			{
				Config: snap(`name = "before-upgrade"`),
				Check: resource.ComposeAggregateTestCheckFunc(agrees, remember(false),
					resource.TestCheckResourceAttr(x, "status", "available"),
					resource.TestCheckResourceAttrPair(x, "server_id", "berth_server.s", "id")),
			},
			{ResourceName: x, ImportState: true, ImportStateVerify: true},
			{
				ResourceName: x, ImportState: true, ImportStateVerify: true,
				ImportStateIdFunc: func(s *terraform.State) (string, error) {
					name, err := attr(s, "berth_server.s", "name")
					return name + "/" + strconv.FormatInt(id, 10), err
				},
			},
			{
				Config: snap(`name = "with-memory"; include_memory = true`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(x, plancheck.ResourceActionDestroyBeforeCreate)}},
				Check: resource.ComposeAggregateTestCheckFunc(agrees, remember(true),
					resource.TestCheckResourceAttr(x, "include_memory", "true")),
			},
			{
				PreConfig: func() {
					if _, err := a.c.DeleteSnapshot(a.ctx(), client.ID(server), id); err != nil {
						t.Fatalf("deleting snapshot %d through the API: %v", id, err)
					}
				},
				Config: snap(`name = "with-memory"; include_memory = true`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(x, plancheck.ResourceActionCreate)}},
				Check: resource.ComposeAggregateTestCheckFunc(agrees, remember(true)),
			},
			{
				Config:      snap(`name = "with-memory"; include_memory = true`) + hcl(`resource "berth_snapshot" "y" { server_id = berth_server.s.id; name = "auto-daily" }`),
				ExpectError: onAttribute("berth_snapshot.y", "name", message(t, "en", "validation.snapshot_name_reserved", map[string]any{"prefix": "auto-"})),
			},
		},
	})
}
