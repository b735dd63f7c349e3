package hosting

// The rules of an order (POST /servers) that need nothing but what the order and
// the catalog say. What needs the store (an id that names nothing, stock, quota) is
// ops' to check; ops.Service.OrderServer runs both and reports every failure at once.

// OrderFields are an order's fields in the order of its request schema: the order of
// its 422's messages.
var OrderFields = []string{"plan_id", "location_id", "image_id", "ssh_key_ids", "display_name", "project_id", "app_id", "recipe_id",
	"root_password", "volume_ids", "automount", "license_ids"}

// CheckOrderChoice records what is wrong with the catalog items an order names before
// any is looked up: a plan and a location are required, and exactly one of an image
// and an app (on image_id). A nil id is a field left out.
func CheckOrderChoice(v *Validation, planID, locationID, imageID, appID *int64) {
	if planID == nil {
		v.Add("plan_id", "validation.required")
	}
	if locationID == nil {
		v.Add("location_id", "validation.required")
	}
	switch {
	case imageID != nil && appID != nil:
		v.Add("image_id", "validation.image_app_both")
	case imageID == nil && appID == nil:
		v.Add("image_id", "validation.image_app_none")
	}
}

// CheckPlanOffered records on plan_id that l does not sell p, and returns p as l
// sells it (with its capacity there) and whether it does.
func CheckPlanOffered(v *Validation, l Location, p Plan) (Plan, bool) {
	for _, lp := range l.Plans {
		if lp.ID == p.ID {
			return lp, true
		}
	}
	v.Add("plan_id", "validation.plan_not_offered")
	return p, false
}

// CheckImageOffered records on image_id that l does not offer image id, and reports
// whether it does.
func CheckImageOffered(v *Validation, l Location, id int64) bool {
	for _, i := range l.Images {
		if i.ID == id {
			return true
		}
	}
	v.Add("image_id", "validation.image_not_offered")
	return false
}

// CheckAppImage returns the image an app installs on at l, its first Ubuntu image;
// without one it records the failure on app_id and returns 0.
func CheckAppImage(v *Validation, l Location) int64 {
	for _, i := range l.Images {
		if i.IsUbuntu() {
			return i.ID
		}
	}
	v.Add("app_id", "validation.app_no_ubuntu")
	return 0
}

// CheckSSHKeyIDs records on ssh_key_ids, in the order of ids, each id listed again
// and each the account does not have (once each); known holds the account's keys
// among ids. It returns the keys, each once, in the order of ids.
func CheckSSHKeyIDs(v *Validation, ids []int64, known map[int64]SSHKey) []SSHKey {
	var keys []SSHKey
	seen := map[int64]bool{}
	for _, id := range ids {
		k, ok := known[id]
		switch {
		case seen[id]:
			v.Add("ssh_key_ids", "validation.ssh_key_repeated", "id", id)
		case !ok:
			v.Add("ssh_key_ids", "validation.ssh_key_unknown", "id", id)
		default:
			keys = append(keys, k)
		}
		seen[id] = true
	}
	return keys
}

// CheckOrderCredit records on plan_id, as CodeInsufficientCredit, that a's credit
// does not cover p's first hour and licenses, the month of the licenses the order
// holds, which an order charges at once (docs/api.md, Licenses). A plan that is
// missing (ID 0) or already wrong is not checked.
func CheckOrderCredit(v *Validation, a Account, p Plan, licenses Money) {
	if p.ID == 0 || v.Has("plan_id") || a.Credit >= p.PriceHourly+licenses {
		return
	}
	if licenses == 0 {
		CreditTooLow(v, a, p)
		return
	}
	v.Add("plan_id", "validation.credit_too_low_licenses", "amount", (p.PriceHourly + licenses).String(), "currency", a.Currency)
	v.SetCode(CodeInsufficientCredit)
}

// CreditTooLow records on plan_id, as CodeInsufficientCredit, that a's credit does
// not cover p's first hour.
func CreditTooLow(v *Validation, a Account, p Plan) {
	v.Add("plan_id", "validation.credit_too_low", "amount", p.PriceHourly.String(), "currency", a.Currency)
	v.SetCode(CodeInsufficientCredit)
}
