package httpapi

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/internal/hosting"
)

// TestDecodeStrict: bodies decode only as the JSON objects the schema describes.
func TestDecodeStrict(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body  string
		field string // "" means accepted
	}{
		{"", ""},
		{" \t\r\n", ""},
		{"\n{\"name\":\"p\"}\r\n", ""},
		{"\v", "body"},
		{"\f{}", "body"},
		{"\u00a0{\"name\":\"p\"}", "body"},
		{"{\"name\":\"p\"}\u0085", "body"},
		{`{"NAME":"p"}`, "NAME"},
		{`{"Name":"p"}`, "Name"},
		{`{"name":"p","nAme":"q"}`, "nAme"},
		{`{"\u212aey":"p","name":"p"}`, "\u212aey"}, // Kelvin sign, which folds to k
		{`{"":"p"}`, "body"},
	} {
		var dst api.ProjectWrite
		err := decode(httptest.NewRequest("POST", "/", strings.NewReader(tc.body)), &dst)
		e, _ := err.(*hosting.Error)
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%q: %v, want accepted", tc.body, err)
		case tc.field != "" && (e == nil || len(e.Fields[tc.field]) == 0):
			t.Errorf("%q: %v, want an error on %s", tc.body, err, tc.field)
		}
	}
}

// TestDecodeExactNames: a member whose name matches a field only when case is ignored
// is an unknown field, and so is every other such member, in the order of the body;
// also beside the real field, whose value it is never taken for.
func TestDecodeExactNames(t *testing.T) {
	t.Parallel()
	var dst api.ServerCreate
	err := decode(httptest.NewRequest("POST", "/", strings.NewReader(`{"PLAN_ID":1,"location_id":1,"Image_Id":1,"zzz":1}`)), &dst)
	e, ok := err.(*hosting.Error)
	if !ok || strings.Join(e.Order, ",") != "PLAN_ID,Image_Id,zzz" {
		t.Fatalf("error %v, want unknown PLAN_ID, Image_Id, zzz", err)
	}
	var pw api.ProjectWrite
	err = decode(httptest.NewRequest("POST", "/", strings.NewReader(`{"NAME":1,"name":"p"}`)), &pw)
	if e, ok := err.(*hosting.Error); !ok || strings.Join(e.Order, ",") != "NAME" || e.Fields["NAME"][0].ID != "validation.unknown_field" {
		t.Fatalf("error %v, want only NAME unknown", err)
	}
	for _, f := range e.Order {
		if e.Fields[f][0].ID != "validation.unknown_field" {
			t.Errorf("%s: %s", f, e.Fields[f][0].ID)
		}
	}
}
