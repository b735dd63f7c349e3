package libvirtdriver

import (
	"fmt"

	"github.com/digitalocean/go-libvirt"
)

// Tenant isolation on the bridge: every guest NIC Berth defines carries a libvirt
// network filter (nwfilter: ebtables rules on the host, per NIC) with the server's
// own MAC, IPv4 and IPv6 addresses as parameters. It is built on libvirt's standard
// clean-traffic filter (no MAC, IP or ARP spoofing; nothing but IPv4 and ARP) and
// adds what a shared bridge of a hosting provider needs beside it:
//
//   - berth-no-dhcp-server: no DHCP server in a guest (UDP from port 67).
//   - berth-clean-traffic: clean-traffic and the above; for a guest with IPv4 only.
//   - berth-ipv6-guard: no router advertisements or redirects and no DHCPv6 server
//     from a guest; neighbour discovery from its link-local address (and duplicate
//     address detection from ::) passes, everything else must come from its address.
//   - berth-clean-traffic-ipv6: berth-clean-traffic, the guard, libvirt's
//     no-ipv6-spoofing, and IPv6 let through; for a guest with an IPv6 address too.
//
// Each of Berth's own chains ends with an explicit return rule: ebtables-nft 1.8.9
// (Debian 12) creates a new chain with an accept at its end instead of the RETURN
// policy it lists, so a packet that falls off the end of a chain would be accepted
// there, never reaching the checks after it (found by TestTenantTrafficFilter).
//
// Not covered: the target of an IPv6 neighbour advertisement (ebtables cannot match
// it), so a guest can still poison its neighbours' IPv6 caches for addresses on the
// bridge; its packets' source addresses are checked all the same.
//
// Berth defines these filters on a host when the host is added and again on every new
// connection to it (a new Berth version brings its filters to every host as it starts
// using it). libvirt keeps a filter that did not change as it is, and re-applies one
// that did to every running guest that uses it.

// Filter names, as guest NICs refer to them.
const (
	FilterIPv4 = "berth-clean-traffic"
	FilterIPv6 = "berth-clean-traffic-ipv6"
)

// filters are Berth's filter definitions, in the order they are defined (a filter
// after those it refers to). UUIDs are fixed: a definition replaces the one before.
var filters = []struct{ name, xml string }{
	{"berth-no-dhcp-server", `<filter name='berth-no-dhcp-server' chain='ipv4-berth' priority='-720'>
  <uuid>da2c7e46-25b2-4ff2-991a-ba26ca4c149c</uuid>
  <rule direction='out' action='drop' priority='100'>
    <ip protocol='udp' srcportstart='67'/>
  </rule>
  <rule direction='inout' action='return' priority='1000'/>
</filter>`},
	{FilterIPv4, `<filter name='` + FilterIPv4 + `' chain='root'>
  <uuid>a428caa0-6310-4e47-9e35-d78cbed455d2</uuid>
  <filterref filter='clean-traffic'/>
  <filterref filter='berth-no-dhcp-server'/>
</filter>`},
	{"berth-ipv6-guard", `<filter name='berth-ipv6-guard' chain='ipv6-berth' priority='-620'>
  <uuid>ff7bbd6e-de8b-4b93-bcb1-596bbd32b523</uuid>
  <rule direction='out' action='drop' priority='100'>
    <ipv6 protocol='icmpv6' type='134'/>
  </rule>
  <rule direction='out' action='drop' priority='100'>
    <ipv6 protocol='icmpv6' type='137'/>
  </rule>
  <rule direction='out' action='drop' priority='100'>
    <ipv6 protocol='udp' srcportstart='547'/>
  </rule>
  <rule direction='out' action='accept' priority='200'>
    <ipv6 srcipaddr='fe80::' srcipmask='10' protocol='icmpv6' type='133'/>
  </rule>
  <rule direction='out' action='accept' priority='200'>
    <ipv6 srcipaddr='fe80::' srcipmask='10' protocol='icmpv6' type='135' typeend='136'/>
  </rule>
  <rule direction='out' action='accept' priority='200'>
    <ipv6 srcipaddr='fe80::' srcipmask='10' protocol='icmpv6' type='143'/>
  </rule>
  <rule direction='out' action='accept' priority='200'>
    <ipv6 srcipaddr='::' srcipmask='128' protocol='icmpv6' type='135'/>
  </rule>
  <rule direction='out' action='accept' priority='200'>
    <ipv6 srcipaddr='::' srcipmask='128' protocol='icmpv6' type='143'/>
  </rule>
  <rule direction='inout' action='return' priority='1000'/>
</filter>`},
	{FilterIPv6, `<filter name='` + FilterIPv6 + `' chain='root'>
  <uuid>69ff8ef7-4df4-40f7-acac-9a9b2fb06a0f</uuid>
  <filterref filter='` + FilterIPv4 + `'/>
  <filterref filter='berth-ipv6-guard'/>
  <filterref filter='no-ipv6-spoofing'/>
  <rule direction='out' action='accept' priority='-550'>
    <mac protocolid='ipv6'/>
  </rule>
  <filterref filter='allow-incoming-ipv6'/>
</filter>`},
}

// libvirtFilters are libvirt's standard filters Berth's build on (Debian ships them
// in libvirt-daemon-config-nwfilter).
var libvirtFilters = []string{"clean-traffic", "no-ipv6-spoofing", "allow-incoming-ipv6"}

// defineFilters defines (or updates) Berth's filters on a host.
func defineFilters(l *libvirt.Libvirt) error {
	for _, name := range libvirtFilters {
		if _, err := l.NwfilterLookupByName(name); err != nil {
			return fmt.Errorf("libvirt's standard network filter %s is missing (Debian: apt-get install libvirt-daemon-config-nwfilter): %w", name, err)
		}
	}
	for _, f := range filters {
		if _, err := l.NwfilterDefineXML(f.xml); err != nil {
			return fmt.Errorf("define network filter %s: %w", f.name, err)
		}
	}
	return nil
}

// filterFor is the filter of a machine's NIC: with IPv6 when it has an address.
func filterFor(m machine) string {
	if m.IPv6 != "" {
		return FilterIPv6
	}
	return FilterIPv4
}
