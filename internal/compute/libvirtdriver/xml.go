package libvirtdriver

import (
	"bytes"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"path"
	"strconv"
	"strings"
	"text/template"

	"github.com/digitalocean/go-libvirt"

	"github.com/berthhq/berth/internal/compute"
)

// domainXML is the definition of a machine's domain: KVM with the host's CPU model
// on a host that runs its guests with KVM, TCG ('qemu') elsewhere; ACPI so shutdown
// and reboot reach the guest; the disk (with the plan's I/O limits) and the seed from
// the host's pool; a virtio NIC on the host's bridge with the plan's bandwidth and
// Berth's traffic filter; and the serial console logged to a file (append='on': a
// start must not truncate it).
var domainTmpl = template.Must(template.New("domain").Parse(`<domain type='{{.Type}}'>
  <name>{{.Domain}}</name>
{{- if .UUID}}
  <uuid>{{.UUID}}</uuid>
{{- end}}
  <title>Berth {{.Name}}</title>
  <metadata>
    <berth:machine xmlns:berth='` + MarkerNS + `' name='{{.Name}}' generation='{{.Gen}}'/>
  </metadata>
  <memory unit='MiB'>{{.MemoryMB}}</memory>
  <currentMemory unit='MiB'>{{.MemoryMB}}</currentMemory>
  <vcpu placement='static'>{{.VCPUs}}</vcpu>
{{- if eq .Type "kvm"}}
  <cpu mode='host-model'/>
{{- end}}
  <os>
    <type arch='x86_64' machine='{{.Machine}}'>hvm</type>
    <boot dev='hd'/>
  </os>
  <features><acpi/><apic/></features>
  <clock offset='utc'/>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>restart</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <disk type='volume' device='disk'>
      <driver name='qemu' type='qcow2'/>
      <source pool='{{.Pool}}' volume='{{.Disk}}'/>
      <target dev='vda' bus='virtio'/>
{{- if or .DiskIOPS .DiskBytes}}
      <iotune>
{{- if .DiskIOPS}}
        <total_iops_sec>{{.DiskIOPS}}</total_iops_sec>
{{- end}}
{{- if .DiskBytes}}
        <total_bytes_sec>{{.DiskBytes}}</total_bytes_sec>
{{- end}}
      </iotune>
{{- end}}
    </disk>
    <disk type='volume' device='cdrom'>
      <driver name='qemu' type='raw'/>
      <source pool='{{.Pool}}' volume='{{.Seed}}'/>
      <target dev='hdc' bus='ide'/>
      <readonly/>
    </disk>
{{- range .Volumes}}
    {{.Controller}}
    {{.Disk}}
{{- end}}
    <interface type='bridge'>
      <source bridge='{{.Bridge}}'/>
      <mac address='{{.MAC}}'/>
      <model type='virtio'/>
{{- if .NetKBps}}
      <bandwidth>
        <inbound average='{{.NetKBps}}'/>
        <outbound average='{{.NetKBps}}'/>
      </bandwidth>
{{- end}}
{{- if .Filter}}
      <filterref filter='{{.Filter}}'>
        <parameter name='MAC' value='{{.MAC}}'/>
        <parameter name='IP' value='{{.IPv4}}'/>
{{- if .IPv6}}
        <parameter name='IPV6' value='{{.IPv6}}'/>
{{- end}}
      </filterref>
{{- end}}
    </interface>
    <serial type='pty'>
{{- if .ConsoleLog}}
      <log file='{{.ConsoleLog}}' append='on'/>
{{- end}}
      <target port='0'/>
    </serial>
    <console type='pty'><target type='serial' port='0'/></console>
  </devices>
</domain>
`))

type domainVars struct {
	Type                  string // kvm or qemu
	Name, Domain, UUID    string
	Gen, VCPUs, MemoryMB  int
	Machine, Pool, Bridge string
	Disk, Seed, MAC       string
	ConsoleLog            string
	// Limits in libvirt's units; 0: none.
	NetKBps   int // kilobytes (10^3 bytes) per second, each direction
	DiskIOPS  int
	DiskBytes int64 // bytes per second
	// Filter is the NIC's traffic filter ("": none), with the machine's addresses.
	Filter, IPv4, IPv6 string
	// Volumes are the definitions of the volumes attached (volumeDevice).
	Volumes []struct{ Controller, Disk string }
}

// ConsoleLog is where a host writes a machine's serial console (” when the host
// keeps none).
func ConsoleLog(consoleDir, domain string) string {
	if consoleDir == "" {
		return ""
	}
	return path.Join(consoleDir, domain+"-console.log")
}

func (d *Driver) domainXML(m machine, h host, uuid libvirt.UUID) (string, error) {
	mem := m.MemoryMB
	if d.opt.MaxMemoryMB > 0 {
		mem = min(mem, d.opt.MaxMemoryMB)
	}
	v := domainVars{Type: "qemu", Name: m.Name, Domain: m.Domain, Gen: m.Gen, VCPUs: m.VCPUs, MemoryMB: mem, Machine: d.opt.Machine,
		Pool: h.Pool, Bridge: h.Bridge, Disk: m.diskVolume(), Seed: m.seedVolume(), MAC: m.MAC,
		ConsoleLog: ConsoleLog(h.ConsoleDir, m.Domain),
		// Megabits per second are 125 kilobytes per second (libvirt's unit, as tc's).
		NetKBps: m.Limits.NetworkMbps * 125, DiskIOPS: m.Limits.DiskIOPS, DiskBytes: int64(m.Limits.DiskMBps) * 1_000_000}
	if h.Accel == AccelKVM {
		v.Type = "kvm"
	}
	if !d.opt.NoTrafficFilter {
		v.Filter, v.IPv4, v.IPv6 = filterFor(m), addrOnly(m.IPv4), addrOnly(m.IPv6)
		if v.IPv4 == "" {
			return "", fmt.Errorf("%w: machine %s has no IPv4 address for its traffic filter", compute.ErrFailed, m.Name)
		}
	}
	if uuid != (libvirt.UUID{}) {
		v.UUID = formatUUID(uuid)
	}
	for i, vol := range m.Volumes {
		c, k, err := vol.device(i, scsiDev(i)).xml()
		if err != nil {
			return "", err
		}
		v.Volumes = append(v.Volumes, struct{ Controller, Disk string }{c, k})
	}
	for _, s := range []string{v.Name, v.Domain, v.Pool, v.Bridge, v.ConsoleLog, v.IPv4, v.IPv6} {
		if strings.ContainsAny(s, `'"<>&`) {
			return "", fmt.Errorf("libvirtdriver: %q cannot go into a domain definition", s)
		}
	}
	var b bytes.Buffer
	err := domainTmpl.Execute(&b, v)
	return b.String(), err
}

func formatUUID(u libvirt.UUID) string {
	s := hex.EncodeToString(u[:])
	return s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:32]
}

// markerMatches reports whether a domain's Berth metadata element names machine.
func markerMatches(meta, name string) bool {
	var el struct {
		Name string `xml:"name,attr"`
	}
	return xml.Unmarshal([]byte(meta), &el) == nil && el.Name == name
}

// parsedDomain is what Berth reads back from a domain definition.
type parsedDomain struct {
	VCPUs    int
	MemoryMB int
	Volumes  []string // source volumes of its disks
}

type xmlDomain struct {
	VCPU   string `xml:"vcpu"`
	Memory struct {
		Unit  string `xml:"unit,attr"`
		Value uint64 `xml:",chardata"`
	} `xml:"memory"`
	Disks []struct {
		Source struct {
			Volume string `xml:"volume,attr"`
		} `xml:"source"`
	} `xml:"devices>disk"`
}

func parseDomain(s string) (parsedDomain, error) {
	var x xmlDomain
	if err := xml.Unmarshal([]byte(s), &x); err != nil {
		return parsedDomain{}, err
	}
	var p parsedDomain
	p.VCPUs, _ = strconv.Atoi(strings.TrimSpace(x.VCPU))
	p.MemoryMB = int(toMiB(x.Memory.Value, x.Memory.Unit))
	for _, dk := range x.Disks {
		if dk.Source.Volume != "" {
			p.Volumes = append(p.Volumes, dk.Source.Volume)
		}
	}
	return p, nil
}

func toMiB(v uint64, unit string) uint64 {
	switch strings.ToLower(unit) {
	case "b", "bytes":
		return v >> 20
	case "", "k", "kib":
		return v >> 10
	case "m", "mib":
		return v
	case "g", "gib":
		return v << 10
	}
	return v >> 10
}

// parsedSnapshot is what Berth reads back from a snapshot definition.
type parsedSnapshot struct {
	State       string // the domain's state when it was taken: running, shutoff, ...
	Description string
	Domain      parsedDomain
}

func parseSnapshot(s string) (parsedSnapshot, error) {
	var x struct {
		State       string `xml:"state"`
		Description string `xml:"description"`
		Domain      struct {
			Inner []byte `xml:",innerxml"`
		} `xml:"domain"`
	}
	if err := xml.Unmarshal([]byte(s), &x); err != nil {
		return parsedSnapshot{}, err
	}
	dom, err := parseDomain("<domain>" + string(x.Domain.Inner) + "</domain>")
	return parsedSnapshot{State: x.State, Description: x.Description, Domain: dom}, err
}

// Snapshot descriptions say what the snapshot holds.
const (
	descMemory = "berth: disk and memory"
	// descDisk on a snapshot of a running domain: libvirt's internal snapshots of a
	// running domain hold its memory too, but Berth restores only the disk from it
	// (the guest is reset), as the snapshot asked for.
	descDisk = "berth: disk"
)

func snapshotXML(name, desc string) string {
	var b bytes.Buffer
	b.WriteString("<domainsnapshot><name>")
	_ = xml.EscapeText(&b, []byte(name))
	b.WriteString("</name><description>")
	_ = xml.EscapeText(&b, []byte(desc))
	b.WriteString("</description></domainsnapshot>")
	return b.String()
}

func volumeXML(name string, capacity uint64, format, backingPath string) string {
	var b bytes.Buffer
	b.WriteString("<volume><name>")
	_ = xml.EscapeText(&b, []byte(name))
	compat := ""
	if format == "qcow2" {
		compat = "<compat>1.1</compat>" // v3: a v2 image with snapshots cannot grow
	}
	fmt.Fprintf(&b, "</name><capacity unit='bytes'>%d</capacity><target><format type='%s'/>%s</target>", capacity, format, compat)
	if backingPath != "" {
		b.WriteString("<backingStore><path>")
		_ = xml.EscapeText(&b, []byte(backingPath))
		b.WriteString("</path><format type='qcow2'/></backingStore>")
	}
	b.WriteString("</volume>")
	return b.String()
}

// volumeDevice is how a volume appears in a domain: a virtio-scsi controller of its
// own (a PCI device: taking it away is a hot-unplug the guest must acknowledge, so a
// guest can keep a volume it has not released; docs/drivers.md, "libvirt: volumes")
// with the volume's disk on it, of vendor BERTH, product Volume and serial the
// volume's id. The disk's SCSI target tells the guest whether to mount it: 1 when
// the attach asked for automount, 0 when not.
type volumeDevice struct {
	Controller, Disk string // the two devices' aliases
	Index            int    // the controller's index in the domain
	Dev              string // the disk's target name in the domain (sdX)
	Pool, PoolVolume string
	ID               int64
	Target           int
}

var volumeTmpl = template.Must(template.New("controller").Parse(`<controller type='scsi' index='{{.Index}}' model='virtio-scsi'>
      <alias name='{{.Controller}}'/>
    </controller>`))

var _ = template.Must(volumeTmpl.New("disk").Parse(`<disk type='volume' device='disk'>
      <driver name='qemu' type='raw' discard='unmap'/>
      <source pool='{{.Pool}}' volume='{{.PoolVolume}}'/>
      <target dev='{{.Dev}}' bus='scsi'/>
      <serial>{{.ID}}</serial>
      <vendor>BERTH</vendor>
      <product>Volume</product>
      <alias name='{{.Disk}}'/>
      <address type='drive' controller='{{.Index}}' bus='0' target='{{.Target}}' unit='0'/>
    </disk>`))

// xml is the device's controller and disk definitions.
func (v volumeDevice) xml() (controller, disk string, err error) {
	for _, s := range []string{v.Pool, v.PoolVolume, v.Controller, v.Disk, v.Dev} {
		if s == "" || strings.ContainsAny(s, `'"<>&`) {
			return "", "", fmt.Errorf("libvirtdriver: %q cannot go into a volume's definition", s)
		}
	}
	var c, k bytes.Buffer
	if err := volumeTmpl.ExecuteTemplate(&c, "controller", v); err != nil {
		return "", "", err
	}
	err = volumeTmpl.ExecuteTemplate(&k, "disk", v)
	return c.String(), k.String(), err
}

// scsiDev is the nth SCSI disk's target name: sda, ..., sdz, sdaa, ...
func scsiDev(n int) string {
	s := ""
	for n++; n > 0; n = (n - 1) / 26 {
		s = string(rune('a'+(n-1)%26)) + s
	}
	return "sd" + s
}

// devices is what Berth reads of a definition's (live or inactive) controllers and
// disks when it plugs or unplugs a volume.
type devices struct {
	Controllers []struct {
		Type  string `xml:"type,attr"`
		Index int    `xml:"index,attr"`
		Alias struct {
			Name string `xml:"name,attr"`
		} `xml:"alias"`
	} `xml:"devices>controller"`
	Disks []struct {
		Target struct {
			Dev string `xml:"dev,attr"`
		} `xml:"target"`
		Alias struct {
			Name string `xml:"name,attr"`
		} `xml:"alias"`
	} `xml:"devices>disk"`
}

func parseDevices(s string) (devices, error) {
	var ds devices
	err := xml.Unmarshal([]byte(s), &ds)
	return ds, err
}

// disk is the target name of the disk of that alias.
func (ds devices) disk(alias string) (dev string, ok bool) {
	for _, k := range ds.Disks {
		if k.Alias.Name == alias {
			return k.Target.Dev, true
		}
	}
	return "", false
}

// controller is the index of the controller of that alias.
func (ds devices) controller(alias string) (index int, ok bool) {
	for _, c := range ds.Controllers {
		if c.Alias.Name == alias {
			return c.Index, true
		}
	}
	return 0, false
}

// freeIndex is the lowest index no SCSI controller has.
func (ds devices) freeIndex() int {
	used := map[int]bool{}
	for _, c := range ds.Controllers {
		if c.Type == "scsi" {
			used[c.Index] = true
		}
	}
	i := 0
	for used[i] {
		i++
	}
	return i
}

// freeDev is the first SCSI target name no disk has.
func (ds devices) freeDev() string {
	used := map[string]bool{}
	for _, k := range ds.Disks {
		used[k.Target.Dev] = true
	}
	i := 0
	for used[scsiDev(i)] {
		i++
	}
	return scsiDev(i)
}
