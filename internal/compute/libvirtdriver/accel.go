package libvirtdriver

import (
	"encoding/xml"
	"errors"
	"fmt"
	"strings"

	"github.com/digitalocean/go-libvirt"

	"github.com/berthhq/berth/internal/compute"
)

// How a host runs its guests: KVM (the processor's hardware virtualization; domain
// type kvm, the guest CPU the host's model) or TCG (QEMU emulates the processor,
// ten to fifty times slower; domain type qemu). An operator adds a host with
// AccelAuto (KVM when the host has a usable one), AccelKVM or AccelTCG.
const (
	AccelAuto = "auto"
	AccelKVM  = "kvm"
	AccelTCG  = "tcg"
)

// kvmProbe is what a host says about KVM.
type kvmProbe struct {
	Usable bool
	Why    string // why not, when not
}

// probeKVM reads a host's capabilities: KVM is usable when libvirt's domain
// capabilities for type kvm answer (QEMU has KVM and libvirt can open /dev/kvm) and
// the host's processor shows hardware virtualization (vmx or svm). Without the
// latter a /dev/kvm may still be there (some nested setups) while no guest boots
// under it, as on Berth's CI machine.
func probeKVM(l *libvirt.Libvirt) (kvmProbe, error) {
	domcaps, err := l.ConnectGetDomainCapabilities(nil, libvirt.OptString{"x86_64"}, nil, libvirt.OptString{"kvm"}, 0)
	if err != nil {
		var le libvirt.Error
		if errors.As(err, &le) {
			return kvmProbe{Why: "libvirt has no KVM domain capabilities: " + le.Message}, nil
		}
		return kvmProbe{}, err
	}
	var dc struct {
		Domain string `xml:"domain"`
		CPU    struct {
			Modes []struct {
				Name      string `xml:"name,attr"`
				Supported string `xml:"supported,attr"`
			} `xml:"mode"`
		} `xml:"cpu"`
	}
	if err := xml.Unmarshal([]byte(domcaps), &dc); err != nil {
		return kvmProbe{}, fmt.Errorf("domain capabilities: %w", err)
	}
	if dc.Domain != "kvm" {
		return kvmProbe{Why: fmt.Sprintf("libvirt's domain capabilities are for %q, not kvm", dc.Domain)}, nil
	}
	hostModel := false
	for _, m := range dc.CPU.Modes {
		hostModel = hostModel || (m.Name == "host-model" && m.Supported == "yes")
	}
	if !hostModel {
		return kvmProbe{Why: "KVM offers no host-model CPU"}, nil
	}
	caps, err := l.ConnectGetCapabilities()
	if err != nil {
		return kvmProbe{}, err
	}
	var c struct {
		Features []struct {
			Name string `xml:"name,attr"`
		} `xml:"host>cpu>feature"`
	}
	if err := xml.Unmarshal([]byte(caps), &c); err != nil {
		return kvmProbe{}, fmt.Errorf("capabilities: %w", err)
	}
	for _, f := range c.Features {
		if f.Name == "vmx" || f.Name == "svm" {
			return kvmProbe{Usable: true}, nil
		}
	}
	return kvmProbe{Why: "the host's processor shows no hardware virtualization (vmx or svm)"}, nil
}

// chooseAccel decides how a host to be added runs its guests.
func chooseAccel(mode string, p kvmProbe) (string, error) {
	switch mode {
	case AccelAuto:
		if p.Usable {
			return AccelKVM, nil
		}
		return AccelTCG, nil
	case AccelKVM:
		// Asked for, KVM is used even where the probe doubts it (the operator may know
		// better); a host that cannot start a guest with it then says so.
		return AccelKVM, nil
	case AccelTCG:
		return AccelTCG, nil
	}
	return "", fmt.Errorf("--accel %q: auto, kvm or tcg", mode)
}

// decideAccel probes the host on l (unless mode is tcg) and answers what its guests
// run with under mode, with a note when KVM is not used or is doubted.
func decideAccel(l *libvirt.Libvirt, uri, mode string) (accel, note string, err error) {
	probe := kvmProbe{Why: "not probed: --accel tcg"}
	if mode != AccelTCG {
		if probe, err = probeKVM(l); err != nil {
			return "", "", fmt.Errorf("capabilities of %s: %w", uri, err)
		}
	}
	if accel, err = chooseAccel(mode, probe); err != nil {
		return "", "", err
	}
	if !probe.Usable {
		note = "no usable KVM: " + probe.Why
		if accel == AccelKVM {
			note = "KVM as asked, though the host seems to have " + note
		}
	}
	return accel, note, nil
}

// kvmRefused is the error of a domain that libvirt would not define or QEMU would not
// start (verb: "define", "start"): on a host running its guests with KVM, a failure
// that names KVM fails the operation at once and says so (the host claims KVM it
// cannot use; Berth never falls back to TCG by itself). Where the host has no KVM at
// all (no /dev/kvm) libvirt refuses the definition ("does not support virt type
// 'kvm'"); where KVM is there but fails, QEMU fails at the start.
func (d *Driver) kvmRefused(h host, verb string, dom libvirt.Domain, err error) error {
	var le libvirt.Error
	if h.Accel == AccelKVM && errors.As(err, &le) && strings.Contains(strings.ToLower(le.Message), "kvm") {
		return fmt.Errorf("%w: host %d runs guests with KVM (accel kvm) and could not %s %s with it: %s; "+
			"check /dev/kvm and the processor's virtualization on the host, or run its guests with QEMU's emulation: berthd admin host accel %d tcg",
			compute.ErrFailed, h.ID, verb, dom.Name, strings.Join(strings.Fields(le.Message), " "), h.ID)
	}
	return d.lv(h, verb+" domain", err)
}
