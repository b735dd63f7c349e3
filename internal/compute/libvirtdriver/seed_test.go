package libvirtdriver

import (
	"bytes"
	"encoding/base64"
	"io"
	"strings"
	"testing"

	"github.com/kdomanski/iso9660"
)

// The seed is an ISO9660 volume labelled cidata whose files keep cloud-init's names
// (lower case, with their dashes), and every value is quoted so that a key or script
// cannot break out of its line.
func TestSeedISO(t *testing.T) {
	t.Parallel()
	s := Seed{InstanceID: "berth-server-abc123-1", Hostname: "server-abc123",
		SSHKeys:      []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl a \"b\": c"},
		RootPassHash: "$2a$10$abc", Scripts: []string{"#!/bin/sh\necho app", "echo recipe"},
		MAC: "52:54:00:01:02:03", IPv4: "10.77.0.10/24", Gateway: "10.77.0.1", IPv6: "fd77::a4d:a/64", DNS: []string{"1.1.1.1"}}
	b, err := s.ISO()
	if err != nil {
		t.Fatal(err)
	}
	img, err := iso9660.OpenImage(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if label, _ := img.Label(); label != "cidata" {
		t.Fatalf("label %q, want cidata", label)
	}
	root, err := img.RootDir()
	if err != nil {
		t.Fatal(err)
	}
	kids, err := root.GetChildren()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, k := range kids {
		data, _ := io.ReadAll(k.Reader())
		files[k.Name()] = string(data)
	}
	md, ud, nc := s.Files()
	for name, want := range map[string][]byte{"meta-data": md, "user-data": ud, "network-config": nc} {
		if files[name] != string(want) {
			t.Errorf("%s = %q, want %q (files: %v)", name, files[name], want, len(files))
		}
	}
	for _, want := range []string{`local-hostname: "server-abc123"`, `instance-id: "berth-server-abc123-1"`} {
		if !strings.Contains(files["meta-data"], want) {
			t.Errorf("meta-data lacks %s:\n%s", want, files["meta-data"])
		}
	}
	for _, want := range []string{"#cloud-config\n", `- "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl a \"b\": c"`,
		`hashed_passwd: "$2a$10$abc"`, `- ["/var/lib/berth/first-boot-1.sh"]`, `- ["/bin/sh", "/var/lib/berth/first-boot-2.sh"]`} {
		if !strings.Contains(files["user-data"], want) {
			t.Errorf("user-data lacks %s:\n%s", want, files["user-data"])
		}
	}
	for _, want := range []string{`- "10.77.0.10/24"`, `- "fd77::a4d:a/64"`, `gateway4: "10.77.0.1"`, `macaddress: "52:54:00:01:02:03"`} {
		if !strings.Contains(files["network-config"], want) {
			t.Errorf("network-config lacks %s:\n%s", want, files["network-config"])
		}
	}
}

func TestDomainXMLRoundTrip(t *testing.T) {
	t.Parallel()
	d := New(nil, nil, nil, Options{Prefix: "berth-", MaxMemoryMB: 512})
	m := machine{Name: "server-abc123", Domain: "berth-server-abc123", VCPUs: 2, MemoryMB: 2048, Gen: 3, MAC: "52:54:00:01:02:03", IPv4: "10.77.0.10/24"}
	x, err := d.domainXML(m, host{Pool: "berth", Bridge: "berth0", ConsoleDir: "/var/log/libvirt/qemu"}, [16]byte{1})
	if err != nil {
		t.Fatal(err)
	}
	p, err := parseDomain(x)
	if err != nil {
		t.Fatal(err)
	}
	if p.VCPUs != 2 || p.MemoryMB != 512 || len(p.Volumes) != 2 || p.Volumes[0] != "berth-server-abc123-disk-3.qcow2" {
		t.Fatalf("parsed %+v from\n%s", p, x)
	}
	if !strings.Contains(x, "<uuid>01000000-0000-0000-0000-000000000000</uuid>") || !strings.Contains(x, "append='on'") {
		t.Fatalf("domain XML:\n%s", x)
	}
	if _, err := d.domainXML(machine{Name: "x'y", Domain: "x", IPv4: "10.77.0.10/24"}, host{}, [16]byte{}); err == nil {
		t.Fatal("a quote went into the domain XML")
	}
}

// Every machine's first boot installs the volumes' automount hook (a udev rule and
// the script it runs), as cloud-init writes files, and has udev run it for the disks
// there first, before any first-boot script (which may use the volumes).
func TestSeedVolumeHook(t *testing.T) {
	t.Parallel()
	for _, scripts := range [][]string{nil, {"echo app"}} {
		_, ud, _ := Seed{InstanceID: "i-1", Hostname: "server-x", Scripts: scripts}.Files()
		files := map[string]string{}
		var order []string
		var path string
		for _, line := range strings.Split(string(ud), "\n") {
			line = strings.TrimSpace(line)
			if p, ok := strings.CutPrefix(line, "- path: "); ok {
				path = strings.Trim(p, `"`)
				order = append(order, path)
			}
			if c, ok := strings.CutPrefix(line, "content: "); ok {
				b, err := base64.StdEncoding.DecodeString(strings.Trim(c, `"`))
				if err != nil {
					t.Fatal(err)
				}
				files[path] = string(b)
			}
		}
		if files[volumeRulePath] != volumeRule || files[volumeHookPath] != volumeHook {
			t.Errorf("scripts %q: user-data lacks the volume hook:\n%s", scripts, ud)
		}
		if len(order) != 2+len(scripts) || order[0] != volumeRulePath || order[1] != volumeHookPath {
			t.Errorf("scripts %q: files written %q", scripts, order)
		}
		_, runcmd, _ := strings.Cut(string(ud), "runcmd:\n")
		want := `  - ["udevadm", "trigger", "--action=add", "--subsystem-match=block"]` + "\n"
		if !strings.HasPrefix(runcmd, want) || strings.Count(runcmd, "\n") != 1+len(scripts) {
			t.Errorf("scripts %q: runcmd\n%s\nwant the trigger first, then the scripts", scripts, runcmd)
		}
	}
	if !strings.Contains(volumeRule, `RUN+="`+volumeHookPath+` add %k $env{ID_SERIAL_SHORT}"`) {
		t.Errorf("the rule does not run the hook:\n%s", volumeRule)
	}
}
