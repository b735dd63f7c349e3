package hosting

import (
	"fmt"
	"slices"
	"testing"
)

// fieldErrors renders what v recorded, field by field in the order of OrderFields,
// each field's message ids with their arguments in the order they were recorded.
func fieldErrors(v *Validation) []string {
	err := v.Err(OrderFields...)
	if err == nil {
		return nil
	}
	e := err.(*Error)
	var out []string
	for _, f := range e.Order {
		for _, m := range e.Fields[f] {
			s := f + ":" + m.ID
			if len(m.Args) > 0 {
				s += " " + fmt.Sprint(m.Args)
			}
			out = append(out, s)
		}
	}
	return out
}

func id(n int64) *int64 { return &n }

func TestCheckOrderChoice(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                    string
		plan, loc, image, appID *int64
		want                    []string
	}{
		{"plan, location and image", id(1), id(1), id(1), nil, nil},
		{"plan, location and app", id(1), id(1), nil, id(1), nil},
		{"nothing", nil, nil, nil, nil, []string{"plan_id:validation.required", "location_id:validation.required", "image_id:validation.image_app_none"}},
		{"image and app", id(1), id(1), id(1), id(2), []string{"image_id:validation.image_app_both"}},
		{"no location", id(1), nil, id(1), nil, []string{"location_id:validation.required"}},
	} {
		var v Validation
		CheckOrderChoice(&v, tc.plan, tc.loc, tc.image, tc.appID)
		if got := fieldErrors(&v); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestCheckOffered(t *testing.T) {
	t.Parallel()
	two := 2
	loc := Location{ID: 1, Plans: []Plan{{ID: 1}, {ID: 3, Capacity: &two}},
		Images: []Image{{ID: 1, OS: "debian"}, {ID: 2, OS: "Ubuntu"}, {ID: 4, OS: "ubuntu"}}}
	for _, tc := range []struct {
		name string
		run  func(v *Validation) any
		got  any
		want []string
	}{
		{"a plan sold there, with its capacity there", func(v *Validation) any {
			p, ok := CheckPlanOffered(v, loc, Plan{ID: 3, Name: "three"})
			return fmt.Sprint(p.ID, *p.Capacity, ok)
		}, "3 2 true", nil},
		{"a plan not sold there", func(v *Validation) any {
			p, ok := CheckPlanOffered(v, loc, Plan{ID: 2, Name: "two"})
			return fmt.Sprintf("%s %v", p.Name, ok)
		}, "two false", []string{"plan_id:validation.plan_not_offered"}},
		{"an image offered", func(v *Validation) any { return CheckImageOffered(v, loc, 4) }, true, nil},
		{"an image not offered", func(v *Validation) any { return CheckImageOffered(v, loc, 3) }, false,
			[]string{"image_id:validation.image_not_offered"}},
		{"an app on the first Ubuntu image", func(v *Validation) any { return CheckAppImage(v, loc) }, int64(2), nil},
		{"an app where there is no Ubuntu", func(v *Validation) any {
			return CheckAppImage(v, Location{Images: []Image{{ID: 1, OS: "debian"}}})
		}, int64(0), []string{"app_id:validation.app_no_ubuntu"}},
	} {
		var v Validation
		if got := tc.run(&v); got != tc.got {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.got)
		}
		if got := fieldErrors(&v); !slices.Equal(got, tc.want) {
			t.Errorf("%s: errors %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestCheckSSHKeyIDs(t *testing.T) {
	t.Parallel()
	known := map[int64]SSHKey{5: {ID: 5}, 6: {ID: 6}}
	for _, tc := range []struct {
		name string
		ids  []int64
		keys []int64
		want []string
	}{
		{"none", nil, nil, nil},
		{"known ones, in the order given", []int64{6, 5}, []int64{6, 5}, nil},
		{"an unknown one", []int64{5, 9}, []int64{5}, []string{"ssh_key_ids:validation.ssh_key_unknown map[id:9]"}},
		// In the order of the list: an id repeated after an unknown one is told
		// about after it.
		{"repeats and unknowns, in list order", []int64{5, 5, 9, 9, 6, 5}, []int64{5, 6}, []string{
			"ssh_key_ids:validation.ssh_key_repeated map[id:5]", "ssh_key_ids:validation.ssh_key_unknown map[id:9]",
			"ssh_key_ids:validation.ssh_key_repeated map[id:9]", "ssh_key_ids:validation.ssh_key_repeated map[id:5]"}},
	} {
		var v Validation
		keys := CheckSSHKeyIDs(&v, tc.ids, known)
		var got []int64
		for _, k := range keys {
			got = append(got, k.ID)
		}
		if !slices.Equal(got, tc.keys) {
			t.Errorf("%s: keys %v, want %v", tc.name, got, tc.keys)
		}
		if errs := fieldErrors(&v); !slices.Equal(errs, tc.want) {
			t.Errorf("%s: errors %v, want %v", tc.name, errs, tc.want)
		}
	}
}

func TestCheckOrderCredit(t *testing.T) {
	t.Parallel()
	acct := Account{Credit: 70, Currency: "EUR"}
	for _, tc := range []struct {
		name     string
		plan     Plan
		licenses Money
		already  bool // plan_id is wrong already
		want     []string
		code     Code
	}{
		{"covered exactly", Plan{ID: 1, PriceHourly: 70}, 0, false, nil, ""},
		{"not covered", Plan{ID: 2, PriceHourly: 71}, 0, false, []string{"plan_id:validation.credit_too_low map[amount:0.0071 currency:EUR]"},
			CodeInsufficientCredit},
		{"covered with licenses", Plan{ID: 1, PriceHourly: 30}, 40, false, nil, ""},
		{"not covered with licenses", Plan{ID: 1, PriceHourly: 30}, 41,
			false, []string{"plan_id:validation.credit_too_low_licenses map[amount:0.0071 currency:EUR]"}, CodeInsufficientCredit},
		{"no plan", Plan{PriceHourly: 71}, 0, false, nil, ""},
		{"a plan already wrong", Plan{ID: 2, PriceHourly: 71}, 0, true, []string{"plan_id:validation.plan_not_offered"}, CodeValidationFailed},
	} {
		var v Validation
		if tc.already {
			v.Add("plan_id", "validation.plan_not_offered")
		}
		CheckOrderCredit(&v, acct, tc.plan, tc.licenses)
		if got := fieldErrors(&v); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
		if err := v.Err(); err != nil && err.(*Error).Code != tc.code {
			t.Errorf("%s: code %s, want %s", tc.name, err.(*Error).Code, tc.code)
		}
	}
}

// TestOrderFieldsOrderErrors: the errors of an order come in the order of its request
// schema, whatever order its rules ran in; a field outside it (a quota) comes last.
func TestOrderFieldsOrderErrors(t *testing.T) {
	t.Parallel()
	var v Validation
	v.Add("server_quota", "validation.quota_exceeded")
	for _, f := range slices.Backward(OrderFields) {
		v.Add(f, "validation.required")
	}
	want := append(slices.Clone(OrderFields), "server_quota")
	if got := v.Err(OrderFields...).(*Error).Order; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}
