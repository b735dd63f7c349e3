package compute_test

import (
	"context"
	"testing"

	"github.com/berthhq/berth/internal/compute"
)

type plain struct{ compute.Driver }

type placer struct{ compute.Driver }

func (placer) HasRoom(context.Context, int64, int, int, int) (bool, error) { return true, nil }

func TestAs(t *testing.T) {
	t.Parallel()
	p := placer{}
	for _, tt := range []struct {
		name string
		d    compute.Driver
		want bool
	}{
		{"nil", nil, false},
		{"without it", plain{}, false},
		{"with it", p, true},
		{"wrapping one with it", compute.Wrap(plain{}, p), true},
		{"wrapping one without it", compute.Wrap(plain{}, plain{}), false},
		{"twice wrapped", compute.Wrap(plain{}, compute.Wrap(plain{}, p)), true},
		{"a wrapper with it", compute.Wrap(p, plain{}), true},
	} {
		if _, got := compute.As[compute.Placer](tt.d); got != tt.want {
			t.Errorf("%s: As[Placer] found %v, want %v", tt.name, got, tt.want)
		}
	}
	if d := compute.Wrap(p, p); d != compute.Driver(p) {
		t.Errorf("a driver wrapping itself: %#v", d)
	}
}
