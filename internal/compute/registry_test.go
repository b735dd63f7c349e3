package compute_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/compute"
)

// opened is a driver that says which registration made it.
type opened struct {
	compute.Driver
	name string
	env  compute.Env
}

func TestRegistry(t *testing.T) {
	t.Parallel()
	reg := func(name string) compute.Registration {
		return compute.Registration{Name: name, Storage: compute.Storage{Line: name},
			Open: func(env compute.Env) (compute.Driver, error) { return opened{name: name, env: env}, nil }}
	}
	broken := compute.Registration{Name: "broken", Open: func(compute.Env) (compute.Driver, error) { return nil, errors.New("no hosts file") }}
	r := compute.Registry{reg("sim"), reg("libvirt"), broken}
	if got := strings.Join(r.Names(), ","); got != "sim,libvirt,broken" {
		t.Errorf("Names = %s", got)
	}
	if s := r.Storage(); len(s) != 3 || s[0].Line != "sim" || s[1].Line != "libvirt" {
		t.Errorf("Storage = %+v", s)
	}
	for _, c := range []struct {
		name    string
		want    string // the driver opened, or a part of the error
		wantErr bool
	}{
		{"sim", "sim", false},
		{"libvirt", "libvirt", false},
		{"broken", "no hosts file", true},
		{"vmware", `unknown driver "vmware" (this build knows: sim, libvirt, broken)`, true},
		{"", `unknown driver "" (this build knows: sim, libvirt, broken)`, true},
	} {
		d, err := r.Open(c.name, compute.Env{Dialect: compute.DialectPostgres})
		if c.wantErr {
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Open(%q) = %v, %v; want an error with %q", c.name, d, err, c.want)
			}
			continue
		}
		if o, ok := d.(opened); err != nil || !ok || o.name != c.want || o.env.Dialect != compute.DialectPostgres {
			t.Errorf("Open(%q) = %+v, %v; want %s opened with the env", c.name, d, err, c.want)
		}
	}
}
