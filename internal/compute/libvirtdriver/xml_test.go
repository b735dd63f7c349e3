package libvirtdriver

import (
	"encoding/xml"
	"errors"
	"strings"
	"testing"

	"github.com/digitalocean/go-libvirt"

	"github.com/berthhq/berth/internal/compute"
)

// definition is what the domain XML tests read back from a definition.
type definition struct {
	Type string `xml:"type,attr"`
	CPU  *struct {
		Mode string `xml:"mode,attr"`
	} `xml:"cpu"`
	Disks []struct {
		Device string `xml:"device,attr"`
		Target struct {
			Dev string `xml:"dev,attr"`
		} `xml:"target"`
		IOTune *struct {
			TotalIOPS  int64 `xml:"total_iops_sec"`
			TotalBytes int64 `xml:"total_bytes_sec"`
		} `xml:"iotune"`
	} `xml:"devices>disk"`
	Interface struct {
		Source struct {
			Bridge string `xml:"bridge,attr"`
		} `xml:"source"`
		Bandwidth *struct {
			Inbound *struct {
				Average int `xml:"average,attr"`
			} `xml:"inbound"`
			Outbound *struct {
				Average int `xml:"average,attr"`
			} `xml:"outbound"`
		} `xml:"bandwidth"`
		FilterRef *struct {
			Filter string `xml:"filter,attr"`
			Params []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"parameter"`
		} `xml:"filterref"`
	} `xml:"devices>interface"`
}

func (d definition) vda() (iops, bytes int64, ok bool) {
	for _, dk := range d.Disks {
		if dk.Target.Dev == "vda" && dk.IOTune != nil {
			return dk.IOTune.TotalIOPS, dk.IOTune.TotalBytes, true
		}
	}
	return 0, 0, false
}

func (d definition) params() map[string]string {
	out := map[string]string{}
	if d.Interface.FilterRef != nil {
		for _, p := range d.Interface.FilterRef.Params {
			out[p.Name] = p.Value
		}
	}
	return out
}

// TestDomainXMLAccel: a host that runs its guests with KVM gets domain type kvm and
// the host's CPU model; a TCG host domain type qemu and QEMU's default CPU.
func TestDomainXMLAccel(t *testing.T) {
	t.Parallel()
	d := New(nil, nil, nil, Options{})
	m := machine{Name: "server-a", Domain: "berth-server-a", VCPUs: 2, MemoryMB: 1024, DiskGB: 10, Gen: 1,
		MAC: "52:54:00:01:02:03", IPv4: "10.77.0.10/24", IPv6: "fd77::a4d:a/64"}
	for _, tc := range []struct {
		accel, wantType, wantCPU string
	}{
		{AccelKVM, "kvm", "host-model"},
		{AccelTCG, "qemu", ""},
	} {
		x, err := d.domainXML(m, host{ID: 1, Pool: "berth", Bridge: "berth0", Accel: tc.accel}, libvirt.UUID{})
		if err != nil {
			t.Fatal(err)
		}
		var def definition
		if err := xml.Unmarshal([]byte(x), &def); err != nil {
			t.Fatalf("%s: %v\n%s", tc.accel, err, x)
		}
		cpu := ""
		if def.CPU != nil {
			cpu = def.CPU.Mode
		}
		if def.Type != tc.wantType || cpu != tc.wantCPU {
			t.Errorf("host with accel %s: domain type %q, CPU mode %q; want %q, %q\n%s", tc.accel, def.Type, cpu, tc.wantType, tc.wantCPU, x)
		}
	}
}

// TestDomainXMLLimits: each plan limit becomes its libvirt element, in libvirt's unit,
// and a limit the plan does not set is absent.
func TestDomainXMLLimits(t *testing.T) {
	t.Parallel()
	d := New(nil, nil, nil, Options{})
	h := host{ID: 1, Pool: "berth", Bridge: "berth0", Accel: AccelTCG}
	for _, tc := range []struct {
		name                string
		limits              compute.Limits
		wantKBps            int // each direction; 0: no <bandwidth>
		wantIOPS, wantBytes int64
	}{
		{"none", compute.Limits{}, 0, 0, 0},
		{"network", compute.Limits{NetworkMbps: 100}, 12500, 0, 0},
		{"disk iops", compute.Limits{DiskIOPS: 500}, 0, 500, 0},
		{"disk bytes", compute.Limits{DiskMBps: 40}, 0, 0, 40_000_000},
		{"all", compute.Limits{NetworkMbps: 1000, DiskIOPS: 2000, DiskMBps: 200}, 125000, 2000, 200_000_000},
	} {
		m := machine{Name: "server-a", Domain: "berth-server-a", VCPUs: 1, MemoryMB: 512, DiskGB: 10, Gen: 1,
			MAC: "52:54:00:01:02:03", IPv4: "10.77.0.10/24", Limits: tc.limits}
		x, err := d.domainXML(m, h, libvirt.UUID{})
		if err != nil {
			t.Fatal(err)
		}
		var def definition
		if err := xml.Unmarshal([]byte(x), &def); err != nil {
			t.Fatalf("%s: %v\n%s", tc.name, err, x)
		}
		bw := def.Interface.Bandwidth
		switch {
		case tc.wantKBps == 0 && bw != nil:
			t.Errorf("%s: a <bandwidth> without a network limit\n%s", tc.name, x)
		case tc.wantKBps != 0 && (bw == nil || bw.Inbound == nil || bw.Outbound == nil ||
			bw.Inbound.Average != tc.wantKBps || bw.Outbound.Average != tc.wantKBps):
			t.Errorf("%s: bandwidth %+v, want %d KB/s each way\n%s", tc.name, bw, tc.wantKBps, x)
		}
		iops, bytes, ok := def.vda()
		if ok != (tc.wantIOPS != 0 || tc.wantBytes != 0) || iops != tc.wantIOPS || bytes != tc.wantBytes {
			t.Errorf("%s: vda iotune %v: %d IOPS, %d B/s; want %d, %d\n%s", tc.name, ok, iops, bytes, tc.wantIOPS, tc.wantBytes, x)
		}
		for _, dk := range def.Disks {
			if dk.Device == "cdrom" && dk.IOTune != nil {
				t.Errorf("%s: the seed has an iotune: the limits are the server disk's", tc.name)
			}
		}
	}
}

// TestDomainXMLFilter: the NIC carries Berth's traffic filter with the machine's own
// MAC and addresses (the IPv6 filter only when it has an IPv6 address); the test-only
// switch leaves it out; a machine without an address cannot be filtered and fails.
func TestDomainXMLFilter(t *testing.T) {
	t.Parallel()
	h := host{ID: 1, Pool: "berth", Bridge: "br-tenants", Accel: AccelKVM}
	dual := machine{Name: "server-a", Domain: "berth-server-a", VCPUs: 1, MemoryMB: 512, DiskGB: 10, Gen: 1,
		MAC: "52:54:00:01:02:03", IPv4: "203.0.113.10/24", IPv6: "2001:db8::cb00:710a/64"}
	v4 := dual
	v4.IPv6 = ""
	for _, tc := range []struct {
		name       string
		opt        Options
		m          machine
		wantFilter string
		wantParams map[string]string
	}{
		{"dual stack", Options{}, dual, FilterIPv6,
			map[string]string{"MAC": "52:54:00:01:02:03", "IP": "203.0.113.10", "IPV6": "2001:db8::cb00:710a"}},
		{"IPv4 only", Options{}, v4, FilterIPv4, map[string]string{"MAC": "52:54:00:01:02:03", "IP": "203.0.113.10"}},
		{"test switch", Options{NoTrafficFilter: true}, dual, "", map[string]string{}},
	} {
		x, err := New(nil, nil, nil, tc.opt).domainXML(tc.m, h, libvirt.UUID{})
		if err != nil {
			t.Fatal(err)
		}
		var def definition
		if err := xml.Unmarshal([]byte(x), &def); err != nil {
			t.Fatalf("%s: %v\n%s", tc.name, err, x)
		}
		got := ""
		if def.Interface.FilterRef != nil {
			got = def.Interface.FilterRef.Filter
		}
		params := def.params()
		if got != tc.wantFilter || len(params) != len(tc.wantParams) {
			t.Errorf("%s: filter %q with %v; want %q with %v\n%s", tc.name, got, params, tc.wantFilter, tc.wantParams, x)
		}
		for k, v := range tc.wantParams {
			if params[k] != v {
				t.Errorf("%s: filter parameter %s = %q, want %q", tc.name, k, params[k], v)
			}
		}
		if def.Interface.Source.Bridge != "br-tenants" {
			t.Errorf("%s: NIC on bridge %q", tc.name, def.Interface.Source.Bridge)
		}
	}
	none := dual
	none.IPv4 = ""
	if _, err := New(nil, nil, nil, Options{}).domainXML(none, h, libvirt.UUID{}); !errors.Is(err, compute.ErrFailed) {
		t.Errorf("a machine without an IPv4 address: %v, want ErrFailed (its NIC cannot be filtered)", err)
	}
}

// TestFilterDefinitions: Berth's filters parse, each is defined after those it
// refers to, each chain of its own ends with an explicit return (ebtables-nft would
// accept what falls off its end), and the NICs' filters are among them.
func TestFilterDefinitions(t *testing.T) {
	t.Parallel()
	defined := map[string]bool{}
	for _, n := range libvirtFilters {
		defined[n] = true
	}
	for _, f := range filters {
		var x struct {
			Name  string `xml:"name,attr"`
			Chain string `xml:"chain,attr"`
			UUID  string `xml:"uuid"`
			Refs  []struct {
				Filter string `xml:"filter,attr"`
			} `xml:"filterref"`
			Rules []struct {
				Action    string `xml:"action,attr"`
				Direction string `xml:"direction,attr"`
				Priority  int    `xml:"priority,attr"`
				Inner     string `xml:",innerxml"`
			} `xml:"rule"`
		}
		if err := xml.Unmarshal([]byte(f.xml), &x); err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		if x.Name != f.name || x.UUID == "" || x.Chain == "" {
			t.Errorf("%s: name %q, uuid %q, chain %q", f.name, x.Name, x.UUID, x.Chain)
		}
		if x.Chain != "root" {
			last := x.Rules[len(x.Rules)-1]
			for _, r := range x.Rules {
				if r.Priority > last.Priority {
					last = r
				}
			}
			if last.Action != "return" || last.Direction != "inout" || strings.TrimSpace(last.Inner) != "" {
				t.Errorf("%s (chain %s) does not end with a return of everything: %+v", f.name, x.Chain, last)
			}
		}
		for _, r := range x.Refs {
			if !defined[r.Filter] {
				t.Errorf("%s refers to %s, not defined before it", f.name, r.Filter)
			}
		}
		defined[f.name] = true
	}
	for _, n := range []string{FilterIPv4, FilterIPv6} {
		if !defined[n] {
			t.Errorf("NIC filter %s is not defined", n)
		}
	}
}

// TestChooseAccel: auto follows the probe; kvm and tcg are what was asked, whatever
// the probe says (a host asked to use KVM that cannot says so when a guest starts).
func TestChooseAccel(t *testing.T) {
	t.Parallel()
	usable, unusable := kvmProbe{Usable: true}, kvmProbe{Why: "no vmx"}
	for _, tc := range []struct {
		mode  string
		probe kvmProbe
		want  string
	}{
		{AccelAuto, usable, AccelKVM},
		{AccelAuto, unusable, AccelTCG},
		{AccelKVM, usable, AccelKVM},
		{AccelKVM, unusable, AccelKVM},
		{AccelTCG, usable, AccelTCG},
		{AccelTCG, unusable, AccelTCG},
	} {
		if got, err := chooseAccel(tc.mode, tc.probe); err != nil || got != tc.want {
			t.Errorf("chooseAccel(%s, %+v) = %q, %v; want %q", tc.mode, tc.probe, got, err, tc.want)
		}
	}
	if _, err := chooseAccel("hvf", usable); err == nil {
		t.Error(`chooseAccel("hvf") accepted`)
	}
}

// TestKVMRefusedOnKVM: a KVM host whose libvirt refuses the definition over KVM (no
// /dev/kvm: "does not support virt type 'kvm'") or whose QEMU fails over it at the
// start fails the operation at once, naming KVM, the host and the way out; other
// failures (and any on a TCG host) stay libvirt's answer, tried again.
func TestKVMRefusedOnKVM(t *testing.T) {
	t.Parallel()
	d := New(nil, nil, nil, Options{})
	dom := libvirt.Domain{Name: "berth-server-a"}
	kvm := host{ID: 3, Accel: AccelKVM}
	for _, c := range []struct {
		verb string
		err  libvirt.Error
		says string
	}{
		{"start", libvirt.Error{Code: uint32(libvirt.ErrInternalError), Message: "internal error: qemu unexpectedly closed the monitor: " +
			"qemu-system-x86_64: ../../target/i386/kvm/kvm.c:3183: kvm_buf_set_msrs: Assertion `ret == cpu->kvm_msr_buf->nmsrs' failed."}, "kvm_buf_set_msrs"},
		{"define", libvirt.Error{Code: uint32(libvirt.ErrConfigUnsupported),
			Message: "unsupported configuration: Emulator '/usr/bin/qemu-system-x86_64' does not support virt type 'kvm'"}, "does not support virt type 'kvm'"},
	} {
		err := d.kvmRefused(kvm, c.verb, dom, c.err)
		if !errors.Is(err, compute.ErrFailed) {
			t.Fatalf("%s: KVM failure on a KVM host: %v, want ErrFailed", c.verb, err)
		}
		for _, want := range []string{"host 3", "accel kvm", "could not " + c.verb + " berth-server-a", c.says, "berthd admin host accel 3 tcg"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q lacks %q", c.verb, err, want)
			}
		}
		other := libvirt.Error{Code: uint32(libvirt.ErrInternalError), Message: "cannot allocate memory"}
		for name, err := range map[string]error{
			"other failure on a KVM host": d.kvmRefused(kvm, c.verb, dom, other),
			"KVM words on a TCG host":     d.kvmRefused(host{ID: 3, Accel: AccelTCG}, c.verb, dom, c.err),
		} {
			if errors.Is(err, compute.ErrFailed) || errors.Is(err, compute.ErrUnavailable) || !strings.Contains(err.Error(), c.verb+" domain") {
				t.Errorf("%s, %s: %v, want libvirt's answer as it is", c.verb, name, err)
			}
		}
	}
}
