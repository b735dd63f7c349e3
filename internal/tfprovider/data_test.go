package tfprovider_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
	"github.com/berthhq/berth/internal/catalog"
	"github.com/berthhq/berth/internal/testenv"
)

// planAPI is a plan as the data sources spell it, under prefix.
func planAPI(m map[string]string, prefix string, p api.Plan) {
	for k, v := range map[string]string{"id": strconv.FormatInt(p.ID, 10), "name": p.Name, "vcpus": strconv.Itoa(p.VCPUs),
		"memory_mb": strconv.Itoa(p.MemoryMB), "disk_gb": strconv.Itoa(p.DiskGB), "price_hourly": p.PriceHourly,
		"price_monthly": p.PriceMonthly, "in_stock": strconv.FormatBool(p.InStock)} {
		m[prefix+k] = v
	}
}

func imageAPI(m map[string]string, prefix string, im api.Image) {
	for k, v := range map[string]string{"id": strconv.FormatInt(im.ID, 10), "name": im.Name, "os": im.OS, "version": im.Version} {
		m[prefix+k] = v
	}
}

// location is the location of the account's catalog named name.
func (a *acc) location(name string) (api.Location, error) {
	locs, err := a.c.ListLocations(a.ctx())
	for _, l := range locs {
		if l.Name == name {
			return l, nil
		}
	}
	return api.Location{}, fmt.Errorf("no location %s (%v)", name, err)
}

// TestAccDataSources: every data source reads what the API says (the catalog by name
// or id, the account's records by id or name, servers, the account and its billing),
// and a name Berth does not have is an error on its attribute.
func TestAccDataSources(t *testing.T) {
	a := newAcc(t, "en")
	config := a.config(
		hcl(`resource "berth_project" "p" { name = "p" }`) +
			hcl(`resource "berth_ssh_key" "k" { name = "k"; public_key = "`+testenv.PublicKey(t)+" k@example"+`" }`) +
			hcl(`resource "berth_server" "s" { location = "fsn1"; plan = "s2-2c-4g"; image = "debian-12"; project_id = berth_project.p.id }`) +
			hcl(`resource "berth_server" "t" { location = "hel1"; plan = "s1-1c-1g"; app = "docker" }`) +
			hcl(`data "berth_location" "l" { name = "fsn1" }`) +
			hcl(`data "berth_plan" "p" { location = data.berth_location.l.id; name = "s2-2c-4g" }`) +
			hcl(`data "berth_image" "i" { location = "fsn1"; name = "2" }`) +
			hcl(`data "berth_app" "a" { name = "docker" }`) +
			hcl(`data "berth_ssh_key" "k" { name = berth_ssh_key.k.name }`) +
			hcl(`data "berth_project" "p" { id = berth_project.p.id; depends_on = [berth_server.s] }`) +
			hcl(`data "berth_server" "by_name" { name = berth_server.s.name }`) +
			hcl(`data "berth_server" "by_id" { id = berth_server.t.id }`) +
			hcl(`data "berth_servers" "all" { depends_on = [berth_server.s, berth_server.t] }`) +
			hcl(`data "berth_servers" "p" { project_id = berth_project.p.id; depends_on = [berth_server.s, berth_server.t] }`) +
			hcl(`data "berth_account" "me" { depends_on = [berth_server.s, berth_server.t] }`))
	serverData := func(name, of string) resource.TestCheckFunc {
		return func(s *terraform.State) error {
			id, err := idOf(s, of)
			if err != nil {
				return err
			}
			return dataAgrees(name, func() (map[string]string, error) { return a.serverAPI(id) })(s)
		}
	}
	serversData := func(name string, project bool) resource.TestCheckFunc {
		return func(s *terraform.State) error {
			var opts client.ServerListOptions
			if project {
				p, err := idOf(s, "berth_project.p")
				if err != nil {
					return err
				}
				opts.ProjectID = p
			}
			return dataAgrees(name, func() (map[string]string, error) {
				all, err := a.c.ListServers(a.ctx(), opts)
				if err != nil {
					return nil, err
				}
				m := map[string]string{"servers.#": strconv.Itoa(len(all))}
				for i, srv := range all {
					one, err := a.serverAPI(srv.ID)
					if err != nil {
						return nil, err
					}
					for k, v := range one {
						m[fmt.Sprintf("servers.%d.%s", i, k)] = v
					}
					m[fmt.Sprintf("servers.%d.id", i)] = strconv.FormatInt(srv.ID, 10)
				}
				return m, nil
			})(s)
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.providers(),
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: resource.ComposeAggregateTestCheckFunc(
					dataAgrees("data.berth_location.l", func() (map[string]string, error) {
						l, err := a.location("fsn1")
						m := map[string]string{"id": strconv.FormatInt(l.ID, 10), "name": l.Name, "city": l.City, "country": l.Country,
							"snapshot_price_gb_hour": l.SnapshotPriceGBHour, "volume_price_gb_hour": optString(l.VolumePriceGBHour),
							"volume_price_gb_month": optString(l.VolumePriceGBMonth), "plans.#": strconv.Itoa(len(l.Plans)),
							"images.#": strconv.Itoa(len(l.Images))}
						for i, p := range l.Plans {
							planAPI(m, fmt.Sprintf("plans.%d.", i), p)
						}
						for i, im := range l.Images {
							imageAPI(m, fmt.Sprintf("images.%d.", i), im)
						}
						return m, err
					}),
					dataAgrees("data.berth_plan.p", func() (map[string]string, error) {
						l, err := a.location("fsn1")
						m := map[string]string{"location": strconv.FormatInt(l.ID, 10)}
						for _, p := range l.Plans {
							if p.Name == "s2-2c-4g" {
								planAPI(m, "", p)
							}
						}
						return m, err
					}),
					dataAgrees("data.berth_image.i", func() (map[string]string, error) {
						l, err := a.location("fsn1")
						m := map[string]string{}
						for _, im := range l.Images {
							if im.ID == 2 {
								imageAPI(m, "", im)
							}
						}
						m["name"] = "2" // as configured
						return m, err
					}),
					dataAgrees("data.berth_app.a", func() (map[string]string, error) {
						apps, err := a.c.ListApps(a.ctx())
						for _, ap := range apps {
							if ap.Name == "docker" {
								return map[string]string{"id": strconv.FormatInt(ap.ID, 10), "name": ap.Name,
									"description": ap.Description, "version": ap.Version}, err
							}
						}
						return nil, err
					}),
					dataAgrees("data.berth_ssh_key.k", func() (map[string]string, error) {
						keys, err := a.c.ListSSHKeys(a.ctx())
						for _, k := range keys {
							return map[string]string{"id": strconv.FormatInt(k.ID, 10), "name": k.Name, "public_key": k.PublicKey,
								"fingerprint": k.Fingerprint, "created_at": rfc3339(k.CreatedAt)}, err
						}
						return nil, err
					}),
					dataAgrees("data.berth_project.p", func() (map[string]string, error) {
						ps, err := a.c.ListProjects(a.ctx())
						for _, p := range ps {
							return map[string]string{"id": strconv.FormatInt(p.ID, 10), "name": p.Name,
								"server_count": strconv.Itoa(p.ServerCount), "created_at": rfc3339(p.CreatedAt)}, err
						}
						return nil, err
					}),
					resource.TestCheckResourceAttr("data.berth_project.p", "server_count", "1"),
					serverData("data.berth_server.by_name", "berth_server.s"),
					serverData("data.berth_server.by_id", "berth_server.t"),
					serversData("data.berth_servers.all", false),
					serversData("data.berth_servers.p", true),
					resource.TestCheckResourceAttr("data.berth_servers.all", "servers.#", "2"),
					resource.TestCheckResourceAttr("data.berth_servers.p", "servers.#", "1"),
					dataAgrees("data.berth_account.me", func() (map[string]string, error) {
						me, err := a.c.GetMe(a.ctx())
						if err != nil {
							return nil, err
						}
						b, err := a.c.GetBilling(a.ctx())
						if err != nil {
							return nil, err
						}
						m := map[string]string{"id": strconv.FormatInt(me.ID, 10), "email": me.Email, "name": me.Name,
							"language": me.Language, "currency": me.Currency, "credit": b.Credit, "scopes.#": strconv.Itoa(len(me.Scopes)),
							"hourly_burn": b.HourlyBurn, "monthly_burn": b.MonthlyBurn, "days_left": "", "month_to_date": b.MonthToDate,
							"budget": ""}
						if b.DaysLeft != nil {
							m["days_left"] = strconv.FormatInt(*b.DaysLeft, 10)
						}
						if b.Budget != nil {
							m["budget"] = *b.Budget
						}
						return m, nil
					}),
					resource.TestCheckResourceAttrSet("data.berth_account.me", "days_left"),
				),
			},
			{
				Config:      a.config(hcl(`data "berth_plan" "p" { location = "ash1"; name = "s4-8c-16g" }`)),
				ExpectError: regexp.MustCompile(`(?s)name = "s4-8c-16g".*Location "ash1" offers no plan "s4-8c-16g"`),
			},
			{
				Config:      a.config(hcl(`data "berth_server" "s" { name = "server-zzzzzz" }`)),
				ExpectError: regexp.MustCompile(`(?s)No such server.*The account has no server of name "server-zzzzzz"`),
			},
		},
	})
}

// optString is a nullable string as dataAgrees takes it: "" for null.
func optString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TestAccLocationVolumePrices: berth_location shows a location's volume prices as the
// API spells them, trailing zeros kept, and null (absent from the state) where the
// location sells no volumes: here hel1, its prices taken out of the catalog.
func TestAccLocationVolumePrices(t *testing.T) {
	a := newAcc(t, "en")
	cat := catalog.Default()
	for i, l := range cat.Locations {
		if l.Name == "hel1" {
			cat.Locations[i].VolumePriceGBHour, cat.Locations[i].VolumePriceGBMonth = 0, 0
		}
	}
	if err := a.env.App.Service.ApplyCatalog(context.Background(), cat); err != nil {
		t.Fatal(err)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.providers(),
		Steps: []resource.TestStep{{
			Config: a.config(hcl(`data "berth_location" "fsn1" { name = "fsn1" }`) + hcl(`data "berth_location" "hel1" { name = "2" }`)),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("data.berth_location.fsn1", "volume_price_gb_hour", "0.0001"),
				resource.TestCheckResourceAttr("data.berth_location.fsn1", "volume_price_gb_month", "0.0440"),
				resource.TestCheckResourceAttr("data.berth_location.fsn1", "snapshot_price_gb_hour", "0.0001"),
				resource.TestCheckResourceAttr("data.berth_location.hel1", "city", "Helsinki"),
				resource.TestCheckNoResourceAttr("data.berth_location.hel1", "volume_price_gb_hour"),
				resource.TestCheckNoResourceAttr("data.berth_location.hel1", "volume_price_gb_month"),
				dataAgrees("data.berth_location.hel1", func() (map[string]string, error) {
					l, err := a.location("hel1")
					if err == nil && (l.VolumePriceGBHour != nil || l.VolumePriceGBMonth != nil) {
						err = fmt.Errorf("the API sells volumes in hel1: %v %v", *l.VolumePriceGBHour, *l.VolumePriceGBMonth)
					}
					return map[string]string{"id": "2", "volume_price_gb_hour": "", "volume_price_gb_month": ""}, err
				}),
			),
		}},
	})
}
