package dnszone

import "strings"

// Occluded finds the RRsets of zone (a canonical zone name; sets' names relative
// to it) that no resolver is ever answered with: those at or below a delegation (an
// NS RRset of a name other than the apex), which Berth's nameservers answer with a
// referral to the delegation's servers instead (RFC 1034 4.3.2). The delegation's
// own NS is not occluded, nor its glue: the A and AAAA of a name its NS records
// name. It maps "name type" of each occluded RRset to the delegation it lies
// under, the highest one when several nest.
func Occluded(zone string, sets []RRset) map[string]string {
	suffix := "." + strings.TrimSuffix(zone, ".") + "."
	cuts := map[string]bool{}
	glue := map[string]bool{} // NS targets in the zone, relative
	for _, s := range sets {
		if s.Type != TypeNS || s.Name == Apex {
			continue
		}
		cuts[s.Name] = true
		for _, r := range s.Records {
			if t := strings.ToLower(r.Value); strings.HasSuffix(t, suffix) {
				glue[strings.TrimSuffix(t, suffix)] = true
			}
		}
	}
	if len(cuts) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, s := range sets {
		cut := under(s.Name, cuts)
		switch {
		case cut == "":
		case cut == s.Name && s.Type == TypeNS:
		case (s.Type == TypeA || s.Type == TypeAAAA) && glue[s.Name]:
		default:
			out[s.Name+" "+string(s.Type)] = cut
		}
	}
	return out
}

// under is the highest of cuts that name (relative, not the apex) is or lies
// below, or "".
func under(name string, cuts map[string]bool) string {
	if name == Apex {
		return ""
	}
	found := ""
	for n := name; ; {
		if cuts[n] {
			found = n
		}
		i := strings.IndexByte(n, '.')
		if i < 0 {
			return found
		}
		n = n[i+1:]
	}
}
