package webui

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/berthhq/berth/internal/hosting"
)

// Licenses (docs/api.md, Licenses) in the console: the order form offers the
// catalog's products with their monthly prices, and a server's page lists those it
// holds, adds one and removes one after the confirmation page (confirm.go). Every
// rule is the core's (internal/ops/licenses.go): an image's required license is
// held whatever the form says, and cannot be removed.

// licenseOffer is a product of the catalog as the order form offers it.
type licenseOffer struct {
	hosting.License
	// Price is its monthly price: a server's, or a vCPU's.
	Price string
	// PlanPrice is a per-vCPU product's price with the plan chosen, naming the plan
	// ("" when no plan is chosen); PlanPrices the same for each plan of the
	// location, by plan id as JSON, for console.js to follow the choice.
	PlanPrice, PlanPrices string
	// Images are the ids of the location's images that require it (space
	// separated, for console.js), RequiredBy their names.
	Images, RequiredBy string
	// Required: the image chosen requires it, so the order holds it whatever is
	// ticked.
	Required bool
	Checked  bool
}

// licenseOffers are the catalog's products as the order form f shows them.
func licenseOffers(r *req, f *orderForm, all []hosting.License) []licenseOffer {
	chosen, _ := planOf(f.Loc, f.PlanID)
	out := make([]licenseOffer, 0, len(all))
	for _, l := range all {
		o := licenseOffer{License: l, Checked: slices.Contains(f.LicenseIDs, l.ID)}
		if l.Per == hosting.LicensePerVCPU {
			o.Price = r.T("console.licenses.per_vcpu", "price", r.money(l.PriceMonthly))
			byPlan := map[string]string{}
			for _, p := range f.Loc.Plans {
				byPlan[itoa(p.ID)] = r.T("console.licenses.with_plan", "price", r.money(l.MonthlyPrice(p.VCPUs)), "plan", p.Name)
			}
			if f.PlanID != 0 {
				o.PlanPrice = byPlan[itoa(chosen.ID)]
			}
			b, _ := json.Marshal(byPlan)
			o.PlanPrices = string(b)
		} else {
			o.Price = r.T("console.licenses.per_server", "price", r.money(l.PriceMonthly))
		}
		var ids, names []string
		for _, img := range f.Loc.Images {
			if l.RequiredBy(img.ID) {
				ids, names = append(ids, itoa(img.ID)), append(names, img.Name)
				o.Required = o.Required || f.Source == "image:"+itoa(img.ID)
			}
		}
		o.Images, o.RequiredBy = strings.Join(ids, " "), strings.Join(names, ", ")
		out = append(out, o)
	}
	return out
}

// serverLicenseRow is a license of a server as its page lists it.
type serverLicenseRow struct {
	hosting.ServerLicense
	Vendor string
	// Required: the server's image requires it; it cannot be removed.
	Required bool
	// Removable: held, and not required.
	Removable bool
}

// licenseChoice is a product the server's page offers to add, with its price on
// this server.
type licenseChoice struct {
	hosting.License
	Price string
}

// serverLicenses are a server's licenses as its page lists them, and the products
// it can add (those it does not hold).
func (c *Console) serverLicenses(r *req, srv hosting.Server) ([]serverLicenseRow, []licenseChoice, error) {
	held, err := c.svc.Licenses.ServerLicenses(r.ctx(), r.p, hosting.ServerRef{ID: srv.ID})
	if err != nil {
		return nil, nil, err
	}
	all, err := c.svc.Licenses.Licenses(r.ctx())
	if err != nil {
		return nil, nil, err
	}
	byID := map[int64]hosting.License{}
	for _, l := range all {
		byID[l.ID] = l
	}
	rows := make([]serverLicenseRow, len(held))
	holds := map[int64]bool{}
	for i, sl := range held {
		lic := byID[sl.LicenseID]
		rows[i] = serverLicenseRow{ServerLicense: sl, Vendor: lic.Vendor, Required: sl.Held() && lic.RequiredBy(srv.ImageID)}
		rows[i].Removable = sl.Held() && !rows[i].Required
		holds[sl.LicenseID] = holds[sl.LicenseID] || sl.Held()
	}
	var choices []licenseChoice
	for _, l := range all {
		if holds[l.ID] {
			continue
		}
		price := r.T("console.licenses.per_server", "price", r.money(l.PriceMonthly))
		if l.Per == hosting.LicensePerVCPU {
			price = r.T("console.licenses.on_server", "price", r.money(l.MonthlyPrice(srv.VCPUs)), "unit", r.money(l.PriceMonthly))
		}
		choices = append(choices, licenseChoice{License: l, Price: price})
	}
	return rows, choices, nil
}

// addLicense has the server hold the license chosen, its month charged at once.
func (c *Console) addLicense(r *req) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	sl, err := c.svc.Licenses.AddServerLicense(r.ctx(), r.p, id, formID(r, "license_id"))
	return r.done(err, "/servers/"+itoa(id), "console.licenses.added", "name", sl.Name)
}

// heldLicense is the license lid of the server the path names, while it holds it
// (a cancelled or failed one cannot be removed: not found).
func (c *Console) heldLicense(r *req) (hosting.Server, hosting.ServerLicense, error) {
	srv, err := c.pathServer(r)
	if err != nil {
		return srv, hosting.ServerLicense{}, err
	}
	lid, err := pathID(r, "lid")
	if err != nil {
		return srv, hosting.ServerLicense{}, err
	}
	held, err := c.svc.Licenses.ServerLicenses(r.ctx(), r.p, hosting.ServerRef{ID: srv.ID})
	if err != nil {
		return srv, hosting.ServerLicense{}, err
	}
	i := slices.IndexFunc(held, func(l hosting.ServerLicense) bool { return l.ID == lid && l.Held() })
	if i < 0 {
		return srv, hosting.ServerLicense{}, hosting.ErrNotFound()
	}
	return srv, held[i], nil
}

// removeLicensePage asks before a license's removal: its paid month is not refunded.
// One the server's image requires is refused here as the core refuses it (422).
func (c *Console) removeLicensePage(r *req) error {
	srv, sl, err := c.heldLicense(r)
	if err != nil {
		return err
	}
	all, err := c.svc.Licenses.Licenses(r.ctx())
	if err != nil {
		return err
	}
	if i := slices.IndexFunc(all, func(l hosting.License) bool { return l.ID == sl.LicenseID }); i >= 0 && all[i].RequiredBy(srv.ImageID) {
		return hosting.Invalid("license_id", "validation.license_required_by_image")
	}
	back := "/servers/" + itoa(srv.ID)
	return c.confirm(r, "console.confirm.license_remove_title", "servers", confirmation{
		Question: r.T("console.confirm.license_remove", "license", sl.Name, "name", srv.DisplayName,
			"until", when(sl.PaidThrough)),
		Action: back + "/licenses/" + itoa(sl.ID) + "/remove", Button: r.T("console.licenses.remove_confirm"), Cancel: back})
}

// removeLicense cancels the license: listed as cancelled until its paid month ends.
func (c *Console) removeLicense(r *req) error {
	srv, sl, err := c.heldLicense(r)
	if err != nil {
		return err
	}
	err = c.svc.Licenses.RemoveServerLicense(r.ctx(), r.p, srv.ID, sl.ID)
	return r.done(err, "/servers/"+itoa(srv.ID), "console.licenses.removed", "name", sl.Name)
}
