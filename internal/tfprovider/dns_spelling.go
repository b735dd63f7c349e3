package tfprovider

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
	"github.com/berthhq/berth/internal/dnszone"
)

// Berth answers DNS names, values and addresses in one canonical form (docs/api.md,
// Domains): `mail` is `mail.example.com.`, `2001:DB8::1` is `2001:db8::1`. The state
// keeps what the configuration wrote when Berth writes it alike, so that a plan after
// an apply, or after an import, is empty.

// keepSame plans a string attribute as the state has it when the configuration
// writes the same thing otherwise (same says so). OpenTofu and Terraform take a
// planned value other than the configuration's when it is the prior state's: the
// provider says the two are the same. It goes before RequiresReplace.
type keepSame struct {
	desc string
	same func(ctx context.Context, req planmodifier.StringRequest, state, config string) bool
}

func (k keepSame) Description(context.Context) string             { return k.desc }
func (k keepSame) MarkdownDescription(ctx context.Context) string { return k.Description(ctx) }

func (k keepSame) PlanModifyString(ctx context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if !known(req.StateValue) || !known(req.ConfigValue) || req.StateValue.Equal(req.ConfigValue) {
		return
	}
	if k.same(ctx, req, req.StateValue.ValueString(), req.ConfigValue.ValueString()) {
		resp.PlanValue = req.StateValue
	}
}

// recordModel is one record of an RRset.
type recordModel struct {
	Value   types.String `tfsdk:"value"`
	Comment types.String `tfsdk:"comment"`
}

// sameComment reports whether Berth keeps comments a and b alike: each run of spaces
// one space, a space before each ";" (docs/api.md, Domains).
func sameComment(a, b string) bool {
	norm := func(s string) string { return strings.Join(strings.Fields(strings.ReplaceAll(s, ";", " ;")), " ") }
	return norm(a) == norm(b)
}

// sameRecord reports whether mine (the configuration's or the state's) is got, a
// record of the RRset name (relative) and typ in zone as Berth answers it.
func sameRecord(zone, name, typ string, mine recordModel, got api.DNSRecord) bool {
	if !known(mine.Value) || mine.Comment.IsUnknown() {
		return false
	}
	return client.SameRecordValue(zone, name, typ, mine.Value.ValueString(), got.Value) &&
		sameComment(mine.Comment.ValueString(), got.Comment)
}

// spelledRecords are the records Berth answers (got), each as mine writes it where
// mine's record in that place is the same (sameRecord), else as Berth does.
func spelledRecords(zone, name, typ string, mine []recordModel, got []api.DNSRecord) []recordModel {
	out := make([]recordModel, len(got))
	for i, r := range got {
		if i < len(mine) && sameRecord(zone, name, typ, mine[i], r) {
			out[i] = mine[i]
			continue
		}
		out[i] = recordModel{Value: types.StringValue(r.Value), Comment: types.StringValue(r.Comment)}
	}
	return out
}

// sameRecords reports whether the records planned are those of the state, record for
// record, spelled otherwise.
func sameRecords(zone, name, typ string, planned, state []recordModel) bool {
	if len(planned) != len(state) {
		return false
	}
	for i := range planned {
		if !known(state[i].Value) || !sameRecord(zone, name, typ, planned[i],
			api.DNSRecord{Value: state[i].Value.ValueString(), Comment: state[i].Comment.ValueString()}) {
			return false
		}
	}
	return true
}

// rrsetID is an RRset's id and import id: zone/name/TYPE, the name relative ("@"
// the apex).
func rrsetID(zone, name, typ string) string { return zone + "/" + name + "/" + typ }

// parseRRsetID reads an RRset's import id, zone/name/type, the zone by name or id,
// the name relative ("@" the apex) or absolute with a trailing dot.
func parseRRsetID(id string) (zone, name, typ string, err error) {
	parts := strings.Split(id, "/")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return "", "", "", fmt.Errorf("%q is not zone/name/type (e.g. example.com/www/A, example.com/@/MX)", id)
	}
	return parts[0], parts[1], strings.ToUpper(parts[2]), nil
}

// parseRDNSID reads a PTR's import id, server/ip, the server by id or name.
func parseRDNSID(id string) (server, ip string, err error) {
	server, ip, ok := strings.Cut(id, "/")
	if !ok || server == "" || strings.Contains(ip, "/") {
		return "", "", fmt.Errorf("%q is not server/ip (e.g. 42/203.0.113.10, web-1/2001:db8::1)", id)
	}
	if _, perr := netip.ParseAddr(ip); perr != nil {
		return "", "", fmt.Errorf("%q is not server/ip: %q is not an IP address", id, ip)
	}
	return server, ip, nil
}

// sameOwner reports whether a and b name the same RRset name in zone (www and
// www.example.com.).
func sameOwner(zone, a, b string) bool {
	ca, errA := dnszone.OwnerName(zone, a)
	cb, errB := dnszone.OwnerName(zone, b)
	return errA == nil && errB == nil && ca == cb
}

// sameHost reports whether a and b are the same host name as Berth keeps it (in
// lower case, without a trailing dot).
func sameHost(a, b string) bool {
	ca, errA := dnszone.ZoneName(a)
	cb, errB := dnszone.ZoneName(b)
	return a == b || errA == nil && errB == nil && ca == cb
}

// sameAddr reports whether a and b are the same IP address (2001:DB8::1 and
// 2001:db8::1).
func sameAddr(a, b string) bool {
	pa, errA := netip.ParseAddr(a)
	pb, errB := netip.ParseAddr(b)
	return a == b || errA == nil && errB == nil && pa == pb
}

// spelledAs is cur when it is known and same says it is got, else got.
func spelledAs(cur types.String, got string, same func(a, b string) bool) types.String {
	if known(cur) && same(cur.ValueString(), got) {
		return cur
	}
	return types.StringValue(got)
}
