package libvirtdriver

import (
	"bytes"
	"encoding/xml"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/digitalocean/go-libvirt"
)

// volumeDefinition is what the volume tests read back from a domain definition.
type volumeDefinition struct {
	Controllers []struct {
		Type  string `xml:"type,attr"`
		Index int    `xml:"index,attr"`
		Model string `xml:"model,attr"`
		Alias struct {
			Name string `xml:"name,attr"`
		} `xml:"alias"`
	} `xml:"devices>controller"`
	Disks []struct {
		Type   string `xml:"type,attr"`
		Source struct {
			Pool   string `xml:"pool,attr"`
			Volume string `xml:"volume,attr"`
		} `xml:"source"`
		Target struct {
			Dev string `xml:"dev,attr"`
			Bus string `xml:"bus,attr"`
		} `xml:"target"`
		Serial  string `xml:"serial"`
		Vendor  string `xml:"vendor"`
		Product string `xml:"product"`
		Address *struct {
			Controller int `xml:"controller,attr"`
			Target     int `xml:"target,attr"`
		} `xml:"address"`
	} `xml:"devices>disk"`
}

// A machine's definition holds the volumes attached to it: each a virtio-scsi
// controller of its own and a disk on it of vendor BERTH, product Volume, serial its
// id, at SCSI target 1 when it is to be mounted (0 when not); parseDevices reads the
// aliases back and finds what is free for the next.
func TestDomainXMLVolumes(t *testing.T) {
	t.Parallel()
	m := machine{Name: "server-abc", Domain: "berth-server-abc", VCPUs: 1, MemoryMB: 256, Gen: 1, IPv4: "10.77.0.10/24",
		Volumes: []volume{
			{Name: "volume-7", ID: 7, Pool: "vols", PoolVolume: "berth-volume-7", Automount: true},
			{Name: "volume-9", ID: 9, Pool: "vols", PoolVolume: "berth-volume-9"},
		}}
	x, err := New(nil, nil, nil, Options{}).domainXML(m, host{Pool: "berth", Bridge: "berth0"}, libvirt.UUID{})
	if err != nil {
		t.Fatal(err)
	}
	var def volumeDefinition
	if err := xml.Unmarshal([]byte(x), &def); err != nil {
		t.Fatalf("%v\n%s", err, x)
	}
	type got struct {
		Alias, Model string
		Index        int
	}
	var ctls []got
	for _, c := range def.Controllers {
		if c.Type == "scsi" {
			ctls = append(ctls, got{c.Alias.Name, c.Model, c.Index})
		}
	}
	if want := []got{{"ua-volume-7", "virtio-scsi", 0}, {"ua-volume-9", "virtio-scsi", 1}}; !slices.Equal(ctls, want) {
		t.Errorf("SCSI controllers %+v, want %+v", ctls, want)
	}
	var disks []string
	for _, k := range def.Disks {
		if k.Target.Bus != "scsi" || k.Address == nil {
			continue
		}
		disks = append(disks, strings.Join([]string{k.Type, k.Source.Pool, k.Source.Volume, k.Target.Dev, k.Vendor, k.Product, k.Serial,
			string(rune('0' + k.Address.Controller)), string(rune('0' + k.Address.Target))}, " "))
	}
	want := []string{"volume vols berth-volume-7 sda BERTH Volume 7 0 1", "volume vols berth-volume-9 sdb BERTH Volume 9 1 0"}
	if !slices.Equal(disks, want) {
		t.Errorf("volume disks\n%q\nwant\n%q", disks, want)
	}

	ds, err := parseDevices(x)
	if err != nil {
		t.Fatal(err)
	}
	if dev, ok := ds.disk("ua-volume-9-disk"); !ok || dev != "sdb" {
		t.Errorf("disk ua-volume-9-disk: %q, %v", dev, ok)
	}
	if i, ok := ds.controller("ua-volume-9"); !ok || i != 1 {
		t.Errorf("controller ua-volume-9: %d, %v", i, ok)
	}
	if _, ok := ds.disk("ua-volume-8-disk"); ok {
		t.Error("found a disk of a volume not attached")
	}
	if i, dev := ds.freeIndex(), ds.freeDev(); i != 2 || dev != "sdc" {
		t.Errorf("free: controller %d, disk %s; want 2, sdc", i, dev)
	}

	bad := m
	bad.Volumes = []volume{{Name: "volume-1", ID: 1, Pool: "a'b", PoolVolume: "v"}}
	if _, err := New(nil, nil, nil, Options{}).domainXML(bad, host{Pool: "berth", Bridge: "berth0"}, libvirt.UUID{}); err == nil {
		t.Error("a pool name with a quote went into a definition")
	}
}

func TestSCSIDev(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{0: "sda", 1: "sdb", 25: "sdz", 26: "sdaa", 27: "sdab", 51: "sdaz", 52: "sdba", 701: "sdzz", 702: "sdaaa"} {
		if got := scsiDev(n); got != want {
			t.Errorf("scsiDev(%d) = %s, want %s", n, got, want)
		}
	}
}

// dataSpans finds what a sparse file holds beyond zeros: the spans cover every byte
// that is not zero, and leave out the holes and the written runs of zeros.
func TestDataSpans(t *testing.T) {
	t.Parallel()
	f, err := os.CreateTemp(t.TempDir(), "spans")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const size = 64 << 20
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	want := make([]byte, size)
	write := func(off int64, b []byte) {
		if _, err := f.WriteAt(b, off); err != nil {
			t.Fatal(err)
		}
		copy(want[off:], b)
	}
	ones := func(n int) []byte { return []byte(strings.Repeat("\x01", n)) }
	write(0, ones(100))
	write(uploadChunk+5, ones(10))
	write(8*uploadChunk, make([]byte, 3*uploadChunk)) // zeros, allocated
	write(21*uploadChunk-1, ones(2))                  // across a chunk's end
	write(size-10, ones(10))
	spans, err := dataSpans(f)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, size)
	total := int64(0)
	for i, s := range spans {
		if i > 0 && s.Off < spans[i-1].Off+spans[i-1].Len {
			t.Errorf("spans %v overlap or are out of order", spans)
		}
		if _, err := f.ReadAt(got[s.Off:s.Off+s.Len], s.Off); err != nil {
			t.Fatal(err)
		}
		total += s.Len
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the spans %v miss data of the file", spans)
	}
	if total > 4*uploadChunk {
		t.Errorf("the spans %v hold %d bytes: the holes or the zeros were not left out", spans, total)
	}
}
