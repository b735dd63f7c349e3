package tfprovider

import (
	"context"
	"errors"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

// The unit tests run without OpenTofu (the acceptance tests, TF_ACC, run through it).

// TestSchemas: the provider serves a valid schema with the resources and data
// sources issue 19 lists, the volumes of issue 29, the domains of issue 30 and the
// licenses of issue 32.
func TestSchemas(t *testing.T) {
	t.Parallel()
	srv, err := providerserver.NewProtocol6WithError(New("test")())()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range resp.Diagnostics {
		t.Errorf("schema: %s: %s", d.Summary, d.Detail)
	}
	var resources, dataSources []string
	for name := range resp.ResourceSchemas {
		resources = append(resources, name)
	}
	for name := range resp.DataSourceSchemas {
		dataSources = append(dataSources, name)
	}
	slices.Sort(resources)
	slices.Sort(dataSources)
	if want := []string{"berth_domain", "berth_project", "berth_recipe", "berth_rrset", "berth_server", "berth_server_rdns",
		"berth_snapshot", "berth_ssh_key", "berth_volume", "berth_volume_attachment", "berth_webhook"}; !slices.Equal(resources, want) {
		t.Errorf("resources %v, want %v", resources, want)
	}
	if want := []string{"berth_account", "berth_app", "berth_domain", "berth_image", "berth_license", "berth_location", "berth_plan",
		"berth_project", "berth_rrsets", "berth_server", "berth_servers", "berth_ssh_key", "berth_volume"}; !slices.Equal(dataSources, want) {
		t.Errorf("data sources %v, want %v", dataSources, want)
	}
	token := resp.Provider.Block.Attributes[slices.IndexFunc(resp.Provider.Block.Attributes,
		func(a *tfprotov6.SchemaAttribute) bool { return a.Name == "token" })]
	if !token.Sensitive {
		t.Error("the provider's token is not sensitive")
	}
}

func TestFind(t *testing.T) {
	t.Parallel()
	loc := api.Location{Name: "fsn1", Plans: []api.Plan{{ID: 1, Name: "small"}, {ID: 2, Name: "large"}}}
	for _, tc := range []struct {
		s      string
		wantID int64
		msg    string
	}{
		{s: "small", wantID: 1},
		{s: "2", wantID: 2},
		{s: "huge", msg: `Location "fsn1" offers no plan "huge". It offers: small (id 1), large (id 2).`},
		{s: "3", msg: `Location "fsn1" offers no plan "3". It offers: small (id 1), large (id 2).`},
		{s: "", msg: `Location "fsn1" offers no plan "". It offers: small (id 1), large (id 2).`},
	} {
		p, err := plan(loc, tc.s)
		var no *notOffered
		switch {
		case tc.msg == "" && (err != nil || p.ID != tc.wantID):
			t.Errorf("plan %q: %+v, %v; want id %d", tc.s, p, err, tc.wantID)
		case tc.msg != "" && (!errors.As(err, &no) || no.msg("en") != tc.msg):
			t.Errorf("plan %q: %v; want %q", tc.s, err, tc.msg)
		}
	}
	if _, err := image(api.Location{Name: "x"}, "any"); err == nil || err.Error() != `Location "x" offers no image "any". It offers: nothing.` {
		t.Errorf("an image of a location without images: %v", err)
	}
}

func TestSpelled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cur  types.String
		want string
	}{
		{types.StringValue("small"), "small"},
		{types.StringValue("1"), "1"},
		{types.StringValue("large"), "small"}, // changed outside: the API's name
		{types.StringValue("2"), "small"},
		{types.StringNull(), "small"},
		{types.StringUnknown(), "small"},
	} {
		if got := spelled(tc.cur, 1, "small"); got.ValueString() != tc.want {
			t.Errorf("spelled(%v) = %v, want %s", tc.cur, got, tc.want)
		}
	}
	if got := spelled(types.StringNull(), 7, ""); got.ValueString() != "7" {
		t.Errorf("a plan the catalog no longer has: %v, want its id", got)
	}
	if got := trimmed(types.StringValue(" web "), "web"); got.ValueString() != " web " {
		t.Errorf("trimmed kept %v", got)
	}
	if got := trimmed(types.StringValue("web"), "app"); got.ValueString() != "app" {
		t.Errorf("trimmed of a rename outside: %v", got)
	}
}

// TestSpellLicenses: the state keeps a server's licenses as the configuration lists
// them when the server holds each and beyond them only licenses its image requires;
// else it shows all the server holds.
func TestSpellLicenses(t *testing.T) {
	t.Parallel()
	// Image 5 requires license 1; license 2 is required by no image.
	k := &catalog{lics: []api.License{{ID: 1, Name: "windows", ImageIDs: []int64{5}}, {ID: 2, Name: "plesk"}, {ID: 3, Name: "cpanel"}}}
	set := func(ids ...int64) types.Set { return int64Set(ids) }
	for _, tc := range []struct {
		name  string
		cur   types.Set
		held  []int64
		image int64
		want  types.Set
	}{
		{"as listed", set(2), []int64{2}, 2, set(2)},
		{"required beyond the list", set(2), []int64{1, 2}, 5, set(2)},
		{"required, empty list", set(), []int64{1}, 5, set()},
		{"required listed", set(1, 2), []int64{1, 2}, 5, set(1, 2)},
		{"not required by this image", set(2), []int64{1, 2}, 2, set(1, 2)},
		{"added outside", set(2), []int64{1, 2, 3}, 5, set(1, 2, 3)},
		{"removed outside", set(2, 3), []int64{1, 2}, 5, set(1, 2)},
		{"unset", types.SetNull(types.Int64Type), []int64{1, 2}, 5, set(1, 2)},
		{"unknown", types.SetUnknown(types.Int64Type), []int64{}, 5, set()},
	} {
		held := map[int64]api.ServerLicense{}
		for _, id := range tc.held {
			held[id] = api.ServerLicense{LicenseID: id, Status: client.LicenseActive}
		}
		got, err := spellLicenses(context.Background(), k, tc.cur, held, tc.image)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}

func TestPowerState(t *testing.T) {
	t.Parallel()
	for status, want := range map[string]string{"running": "running", "starting": "running", "provisioning": "running",
		"reinstalling": "running", "restoring": "running", "stopped": "stopped", "stopping": "stopped",
		"rescaling": "stopped", "suspended": "stopped", "error": "stopped"} {
		if got := powerState(status); got != want {
			t.Errorf("powerState(%s) = %s, want %s", status, got, want)
		}
	}
}

// TestAddError: a 422 is one diagnostic per field, on the attribute the field stands
// for, with the API's message; other errors are one diagnostic on the resource.
func TestAddError(t *testing.T) {
	t.Parallel()
	has := func(name string) bool { return name == "display_name" }
	for _, tc := range []struct {
		name string
		err  error
		want []string // attribute paths ("" for none) and details
	}{
		{"fields", &client.Error{StatusCode: 422, Code: "validation_failed", Fields: map[string][]string{
			"plan_id": {"Not offered here."}, "display_name": {"Too long.", "Bad."}, "body": {"Not JSON."}}},
			[]string{"", "body: Not JSON.", "display_name", "Too long.\nBad.", "plan", "Not offered here."}},
		{"credit", &client.Error{StatusCode: 422, Code: "insufficient_credit", Message: "Credit too low.",
			Fields: map[string][]string{"plan_id": {"Credit too low."}}}, []string{"plan", "Credit too low."}},
		{"busy", &client.Error{StatusCode: 409, Code: "busy", Message: "Busy."}, []string{"", "Busy. (HTTP 409 busy)"}},
		{"other", errors.New("network down"), []string{"", "network down"}},
	} {
		var diags diag.Diagnostics
		addError(&diags, "Cannot order the server", tc.err, fields{"plan_id": "plan"}, has)
		var got []string
		for _, d := range diags {
			at := ""
			if wp, ok := d.(diag.DiagnosticWithPath); ok {
				at = wp.Path().String()
			}
			if d.Summary() != "Cannot order the server" {
				t.Errorf("%s: summary %q", tc.name, d.Summary())
			}
			got = append(got, at, d.Detail())
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: diagnostics %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestNoHTTPOfItsOwn: the provider speaks to Berth only through the SDK (package
// client): neither it nor its binary imports net/http or net (net/netip, addresses as
// values, aside).
func TestNoHTTPOfItsOwn(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{".", "../../cmd/terraform-provider-berth"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range parsed.Imports {
				// net/netip is values only (addresses compared as Berth writes them), no I/O.
				if p := strings.Trim(imp.Path.Value, `"`); p == "net" || strings.HasPrefix(p, "net/") && p != "net/netip" {
					t.Errorf("%s imports %s: the provider calls Berth through package client only", f, p)
				}
			}
		}
	}
}
