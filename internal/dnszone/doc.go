// Package dnszone holds the rules of Berth's DNS hosting (docs/api.md, Domains): what
// a zone name, an RRset name, a type, a TTL and a record value may be, their
// canonical forms, the rules across the RRsets of a zone, and the zone file (BIND
// text) read and written. It is pure: no store, no HTTP, no server. Parsing is
// github.com/miekg/dns's (its ZoneParser), never a hand-written one.
//
// Every refusal is a validation *hosting.Error whose fields carry catalog messages
// (validation.dns_*) with their arguments, keyed by the request field the API reports
// them on: "name", "type", "ttl", "records", and "line N" for a zone file.
package dnszone
