package tfprovider

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

// A server's licenses: the attribute licenses of berth_server, a set of license
// products' ids, Optional and Computed.
//
// Unset, it shows every license the server holds (pending or active) and the
// provider leaves them be. Set, the server is made to hold exactly those, added and
// removed in place, with one exception: the licenses the server's image requires,
// which Berth adds itself at the order and at a reinstall and never removes on
// request, need not be listed. For them the state keeps the configuration's set
// when the server holds each license of it and beyond it only licenses its image
// requires (as spelled keeps a name or an id), so that they make no diff.
//
// A plan modifier alone cannot do it: OpenTofu takes a planned value of a
// configured attribute only when it is the configuration's or the state's, and the
// state after an apply must be what was planned.
//
// Which licenses the configuration listed is kept in the resource's private state
// (licensesKey: the set at the last create or update that had one). A required
// license that was listed and is then taken out of the list is asked to be removed,
// and Berth's 422 is the diagnostic; one never listed (Berth added it itself, or the
// server was imported, or its licenses were unset) is left as it is, and a list
// that differs from the state only by such licenses is no change.

// licensesKey is the private state's key of the licenses last configured.
const licensesKey = "licenses_configured"

var licensesDescription = "The ids of the license products the server holds (pending or active; a removed one " +
	"stays listed in Berth as cancelled until its paid month ends, but not here), e.g. `[data.berth_license.plesk.id]`. " +
	"Given at the order; a change adds and removes licenses in place (an added one is charged its month at once, a " +
	"removed one is not refunded); both need the token's scope `licenses`. An id Berth does not sell is an error at " +
	"plan time. Unset, it shows what the server holds and leaves it be. The licenses the server's image requires are " +
	"added by Berth itself (at the order and at a reinstall to such an image) and need not be listed: a list without " +
	"them is no change, and the state keeps the list as configured. One that was listed and is then taken out of the " +
	"list is not removed: Berth answers that the image requires it (reinstall another image to drop it)."

// int64s are the elements of a set of numbers; ok is false when the set or one of
// its elements is null or unknown.
func int64s(s types.Set) (ids []int64, ok bool) {
	if s.IsNull() || s.IsUnknown() {
		return nil, false
	}
	for _, e := range s.Elements() {
		v, isInt := e.(types.Int64)
		if !isInt || v.IsNull() || v.IsUnknown() {
			return nil, false
		}
		ids = append(ids, v.ValueInt64())
	}
	return ids, true
}

// int64Set is a set of the ids.
func int64Set(ids []int64) types.Set {
	ids = slices.Sorted(slices.Values(ids))
	vals := make([]attr.Value, len(ids))
	for i, id := range ids {
		vals[i] = types.Int64Value(id)
	}
	return types.SetValueMust(types.Int64Type, vals)
}

// heldLicenses are the licenses the server holds (pending or active), by product.
func heldLicenses(ctx context.Context, c *client.Client, server string) (map[int64]api.ServerLicense, error) {
	all, err := c.ListServerLicenses(ctx, server)
	if err != nil {
		return nil, err
	}
	held := map[int64]api.ServerLicense{}
	for _, l := range all {
		if l.Status == client.LicensePending || l.Status == client.LicenseActive {
			held[l.LicenseID] = l
		}
	}
	return held, nil
}

// spellLicenses is the state's licenses of a server that holds held and whose image
// is image: cur (the configuration's or the state's set) when the server holds each
// license of it and beyond it only licenses the image requires, else all it holds.
func spellLicenses(ctx context.Context, k *catalog, cur types.Set, held map[int64]api.ServerLicense, image int64) (types.Set, error) {
	all := make([]int64, 0, len(held))
	for id := range held {
		all = append(all, id)
	}
	ids, ok := int64s(cur)
	if !ok {
		return int64Set(all), nil
	}
	for _, id := range ids {
		if _, ok := held[id]; !ok {
			return int64Set(all), nil
		}
	}
	var extra []int64
	for id := range held {
		if !slices.Contains(ids, id) {
			extra = append(extra, id)
		}
	}
	if len(extra) == 0 {
		return cur, nil
	}
	required, err := k.requiredBy(ctx, image)
	if err != nil {
		return types.SetNull(types.Int64Type), err
	}
	for _, id := range extra {
		if !required[id] {
			return int64Set(all), nil
		}
	}
	return cur, nil
}

// privateGetter and privateSetter are a resource's private state.
type privateGetter interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}

type privateSetter interface {
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

// configuredLicenses are the licenses last configured (licensesKey); nil when none
// were.
func configuredLicenses(ctx context.Context, p privateGetter, diags *diag.Diagnostics) map[int64]bool {
	raw, ds := p.GetKey(ctx, licensesKey)
	diags.Append(ds...)
	if len(raw) == 0 {
		return nil
	}
	var ids []int64
	if err := json.Unmarshal(raw, &ids); err != nil {
		return nil // not ours to fail on: as if none had been configured
	}
	out := make(map[int64]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out
}

// recordLicenses keeps the configuration's licenses cfg in the private state, or
// forgets them when cfg is unset.
func recordLicenses(ctx context.Context, p privateSetter, cfg types.Set, diags *diag.Diagnostics) {
	ids, ok := int64s(cfg)
	if !ok {
		diags.Append(p.SetKey(ctx, licensesKey, nil)...)
		return
	}
	raw, _ := json.Marshal(slices.Sorted(slices.Values(append([]int64{}, ids...))))
	diags.Append(p.SetKey(ctx, licensesKey, raw)...)
}

// checkLicenses fails the plan on each license id of the configuration that Berth
// does not sell, listing those it sells.
func checkLicenses(ctx context.Context, k *catalog, cfg types.Set, lang string, diags *diag.Diagnostics) {
	if cfg.IsNull() || cfg.IsUnknown() {
		return
	}
	for _, e := range cfg.Elements() {
		v, ok := e.(types.Int64)
		if !ok || v.IsNull() || v.IsUnknown() {
			continue
		}
		if _, err := k.license(ctx, strconv.FormatInt(v.ValueInt64(), 10)); err != nil {
			addLookupError(diags, lang, onAttr(err, "licenses"))
		}
	}
}

// planLicenses plans the licenses of an update of the server srv, reinstalled or
// not: unset, unknown when the image changes (the licenses it requires do), and
// everything the server holds when they were set before (the state kept the
// configuration's set); set, the state's set when the configuration's differs from
// it only by licenses the image requires that were never listed (no change).
func planLicenses(ctx context.Context, c *client.Client, k *catalog, req resource.ModifyPlanRequest,
	resp *resource.ModifyPlanResponse, prior types.Set, srv *api.Server, reinstall bool) {
	var cfg types.Set
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("licenses"), &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	listed := configuredLicenses(ctx, req.Private, &resp.Diagnostics)
	switch {
	case cfg.IsNull() && reinstall:
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("licenses"), types.SetUnknown(types.Int64Type))...)
		return
	case cfg.IsNull() && listed != nil:
		held, err := heldLicenses(ctx, c, srv.Name)
		if err != nil {
			resp.Diagnostics.AddError("Cannot read the server's licenses", describeError(err))
			return
		}
		if all := int64Set(slices.Collect(maps.Keys(held))); !all.Equal(prior) {
			resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("licenses"), all)...)
		}
		return
	case cfg.IsNull():
		return
	}
	want, ok := int64s(cfg)
	had, okPrior := int64s(prior)
	if !ok || !okPrior || reinstall || cfg.Equal(prior) {
		return
	}
	for _, id := range want {
		if !slices.Contains(had, id) {
			return // to be added
		}
	}
	required, err := k.requiredBy(ctx, srv.ImageID)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read Berth's catalog", describeError(err))
		return
	}
	for _, id := range had {
		if !slices.Contains(want, id) && (!required[id] || listed[id]) {
			return // to be removed
		}
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("licenses"), prior)...)
}

// syncLicenses makes the server name, whose image is image, hold the licenses want:
// those it holds beyond them are removed first, except those the image requires
// that were never listed (configured, as configuredLicenses has them); then those it
// lacks are added. On a failure it returns what failed and the error.
func syncLicenses(ctx context.Context, c *client.Client, k *catalog, name string, image int64, want []int64,
	configured map[int64]bool) (string, error) {
	held, err := heldLicenses(ctx, c, name)
	if err != nil {
		return "Cannot read the server's licenses", err
	}
	required, err := k.requiredBy(ctx, image)
	if err != nil {
		return "Cannot read Berth's catalog", err
	}
	for _, id := range slices.Sorted(maps.Keys(held)) {
		if slices.Contains(want, id) || required[id] && !configured[id] {
			continue
		}
		sl := held[id]
		if err := c.RetryBusy(ctx, func() error { return c.RemoveServerLicense(ctx, name, sl.ID) }); err != nil && !isNotFound(err) {
			return "Cannot remove the license " + licenseName(ctx, k, id) + " from the server " + name, err
		}
	}
	for _, id := range slices.Sorted(slices.Values(want)) {
		if _, ok := held[id]; ok {
			continue
		}
		err := c.RetryBusy(ctx, func() error {
			_, err := c.AddServerLicense(ctx, name, id)
			return err
		})
		if err != nil {
			return "Cannot add the license " + licenseName(ctx, k, id) + " to the server " + name, err
		}
	}
	return "", nil
}

// licenseName names a license product for a message: its name and id, or its id
// alone when the catalog does not have it.
func licenseName(ctx context.Context, k *catalog, id int64) string {
	lics, err := k.licenses(ctx)
	if err == nil {
		for _, l := range lics {
			if l.ID == id {
				return fmt.Sprintf("%s (id %d)", l.Name, id)
			}
		}
	}
	return strconv.FormatInt(id, 10)
}
