package libvirtdriver

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kdomanski/iso9660"
)

// Seed is what a machine's first boot reads: cloud-init's NoCloud data source.
type Seed struct {
	InstanceID   string // changes with every install, so cloud-init runs again
	Hostname     string
	SSHKeys      []string
	RootPassHash string // crypt(3) hash or empty
	// Scripts run once at first boot, in order (the app's installer, then the recipe).
	Scripts []string
	MAC     string
	IPv4    string // address/prefix, e.g. 10.77.0.10/24
	Gateway string
	IPv6    string // address/prefix or empty
	DNS     []string
}

// q quotes s as a YAML double-quoted scalar (a JSON string is one).
func q(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Files returns the seed's meta-data, user-data and network-config. Every value stands
// on a line of its own, double-quoted, so that even a shell script can read them.
func (s Seed) Files() (metaData, userData, networkConfig []byte) {
	var m bytes.Buffer
	fmt.Fprintf(&m, "instance-id: %s\nlocal-hostname: %s\n", q(s.InstanceID), q(s.Hostname))

	var u bytes.Buffer
	u.WriteString("#cloud-config\n")
	fmt.Fprintf(&u, "hostname: %s\npreserve_hostname: false\ndisable_root: false\n", q(s.Hostname))
	fmt.Fprintf(&u, "ssh_pwauth: %t\n", s.RootPassHash != "")
	u.WriteString("users:\n  - name: \"root\"\n")
	if s.RootPassHash != "" {
		fmt.Fprintf(&u, "    lock_passwd: false\n    hashed_passwd: %s\n", q(s.RootPassHash))
	}
	if len(s.SSHKeys) > 0 {
		u.WriteString("    ssh_authorized_keys:\n")
		for _, k := range s.SSHKeys {
			fmt.Fprintf(&u, "      - %s\n", q(strings.TrimSpace(k)))
		}
	}
	s.writeFiles(&u)

	var n bytes.Buffer
	n.WriteString("version: 2\nethernets:\n  eth0:\n")
	if s.MAC != "" {
		fmt.Fprintf(&n, "    match:\n      macaddress: %s\n    set-name: \"eth0\"\n", q(s.MAC))
	}
	n.WriteString("    dhcp4: false\n    dhcp6: false\n    addresses:\n")
	for _, a := range []string{s.IPv4, s.IPv6} {
		if a != "" {
			fmt.Fprintf(&n, "      - %s\n", q(a))
		}
	}
	if s.Gateway != "" {
		fmt.Fprintf(&n, "    gateway4: %s\n", q(s.Gateway))
	}
	if len(s.DNS) > 0 {
		n.WriteString("    nameservers:\n      addresses:\n")
		for _, d := range s.DNS {
			fmt.Fprintf(&n, "        - %s\n", q(d))
		}
	}
	return m.Bytes(), u.Bytes(), n.Bytes()
}

// writeFiles writes user-data's write_files and runcmd. Every machine gets the
// volumes' automount hook (volumehook.go); the first boot has udev run it for the
// volumes there, before the scripts (which may use them).
func (s Seed) writeFiles(u *bytes.Buffer) {
	u.WriteString("write_files:\n")
	writeFile := func(path, mode, content string) {
		fmt.Fprintf(u, "  - path: %s\n    permissions: %s\n    encoding: \"b64\"\n    content: %s\n",
			q(path), q(mode), q(base64.StdEncoding.EncodeToString([]byte(content))))
	}
	writeFile(volumeRulePath, "0644", volumeRule)
	writeFile(volumeHookPath, "0755", volumeHook)
	for i, sc := range s.Scripts {
		writeFile(scriptPath(i), "0700", sc)
	}
	u.WriteString("runcmd:\n")
	trigger := make([]string, len(volumeTrigger))
	for i, a := range volumeTrigger {
		trigger[i] = q(a)
	}
	fmt.Fprintf(u, "  - [%s]\n", strings.Join(trigger, ", "))
	for i, sc := range s.Scripts {
		if strings.HasPrefix(sc, "#!") {
			fmt.Fprintf(u, "  - [%s]\n", q(scriptPath(i)))
		} else {
			fmt.Fprintf(u, "  - [\"/bin/sh\", %s]\n", q(scriptPath(i)))
		}
	}
}

func scriptPath(i int) string { return fmt.Sprintf("/var/lib/berth/first-boot-%d.sh", i+1) }

// ISO returns the seed as an ISO9660 volume labelled cidata: the NoCloud data source.
func (s Seed) ISO() ([]byte, error) {
	w, err := iso9660.NewWriter()
	if err != nil {
		return nil, err
	}
	defer w.Cleanup()
	md, ud, nc := s.Files()
	for name, data := range map[string][]byte{"meta-data": md, "user-data": ud, "network-config": nc} {
		if err := w.AddFile(bytes.NewReader(data), name); err != nil {
			return nil, err
		}
	}
	var out bytes.Buffer
	if err := w.WriteTo(&out, "cidata"); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
