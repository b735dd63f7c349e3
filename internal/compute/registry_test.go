package compute_test

import (
	"errors"
	"fmt"
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

// reg is a registration of a driver called name on the migration line line.
func reg(name, line string) compute.Registration {
	return compute.Registration{Name: name, Storage: compute.Storage{Line: line},
		Open: func(env compute.Env) (compute.Driver, error) { return opened{name: name, env: env}, nil }}
}

func TestRegistry(t *testing.T) {
	t.Parallel()
	broken := compute.Registration{Name: "broken", Open: func(compute.Env) (compute.Driver, error) { return nil, errors.New("no hosts file") }}
	r := compute.NewRegistry(reg("sim", "sim"), reg("libvirt", "libvirt"), broken)
	if got := strings.Join(r.Names(), ","); got != "sim,libvirt,broken" {
		t.Errorf("Names = %s", got)
	}
	// broken keeps no tables: it has no line for the store to run.
	if s := r.Storage(); len(s) != 2 || s[0].Line != "sim" || s[1].Line != "libvirt" {
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
		{"SIM", `unknown driver "SIM" (this build knows: sim, libvirt, broken)`, true},
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
	if _, err := (&compute.Registry{}).Open("sim", compute.Env{}); err == nil || !strings.Contains(err.Error(), "this build knows: )") {
		t.Errorf("Open on an empty registry = %v", err)
	}
}

// A registration the registry cannot tell apart from another, or cannot open, is a
// mistake of the build's: Register panics with what is wrong, and the registry keeps
// what it had.
func TestRegisterRefuses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		add  compute.Registration
		want string // the panic's message, "" for none
	}{
		{"a new driver", reg("hetzner", "hetzner"), ""},
		{"a driver that keeps no tables", reg("null", ""), ""},
		{"the same name twice", reg("sim", "sim2"), `compute: driver "sim" registered twice`},
		{"another driver's line", reg("sim2", "libvirt"), `compute: drivers "libvirt" and "sim2" both claim the migration line "libvirt"`},
		{"no name", reg("", "x"), `compute: registering driver "": a driver needs a name and Open`},
		{"no Open", compute.Registration{Name: "x"}, `compute: registering driver "x": a driver needs a name and Open`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := compute.NewRegistry(reg("sim", "sim"), reg("libvirt", "libvirt"))
			got := func() (msg string) {
				defer func() {
					if p := recover(); p != nil {
						msg = fmt.Sprint(p)
					}
				}()
				r.Register(c.add)
				return ""
			}()
			if got != c.want {
				t.Errorf("Register(%q) panicked with %q, want %q", c.add.Name, got, c.want)
			}
			names := strings.Join(r.Names(), ",")
			if want := "sim,libvirt"; c.want == "" {
				want += "," + c.add.Name
				if names != want {
					t.Errorf("Names after registering = %s, want %s", names, want)
				}
			} else if names != want {
				t.Errorf("Names after a refused registration = %s, want %s", names, want)
			}
		})
	}
}
