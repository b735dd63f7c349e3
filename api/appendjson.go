package api

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"
)

// The API's hottest answer, GET /v1/servers/{id}, is written without reflection:
// One[Server].AppendJSON appends what encoding/json's Marshal would write, byte for
// byte (TestAppendJSONIsMarshal, FuzzAppendJSON), in about a third of the time and
// without its allocations. A value it cannot write exactly (a time outside RFC 3339)
// makes it report ok false, and the caller marshals as before.

// AppendJSON appends o as json.Marshal writes it, when its Data is of a type that
// has an AppendJSON (a Server); ok is false, and b as given, otherwise.
func (o One[T]) AppendJSON(b []byte) (out []byte, ok bool) {
	// A type switch, not an interface with AppendJSON: the Data is not boxed.
	switch d := any(o.Data).(type) {
	case Server:
		n := len(b)
		b = append(b, `{"data":`...)
		if b, ok = d.AppendJSON(b); !ok {
			return b[:n], false
		}
		return append(b, '}'), true
	}
	return b, false
}

// AppendJSON appends s as json.Marshal writes it; ok is false (and b as given) when
// it cannot.
func (s Server) AppendJSON(b []byte) ([]byte, bool) {
	n := len(b)
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, s.ID, 10)
	b = append(b, `,"name":`...)
	b = appendString(b, s.Name)
	b = append(b, `,"display_name":`...)
	b = appendString(b, s.DisplayName)
	b = append(b, `,"project_id":`...)
	b = appendIntPtr(b, s.ProjectID)
	b = append(b, `,"status":`...)
	b = appendString(b, s.Status)
	b = append(b, `,"operation":`...)
	if s.Operation == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"id":`...)
		b = strconv.AppendInt(b, s.Operation.ID, 10)
		b = append(b, `,"type":`...)
		b = appendString(b, s.Operation.Type)
		b = append(b, `,"started_at":`...)
		var ok bool
		if b, ok = appendTime(b, s.Operation.StartedAt); !ok {
			return b[:n], false
		}
		b = append(b, '}')
	}
	b = append(b, `,"location_id":`...)
	b = strconv.AppendInt(b, s.LocationID, 10)
	b = append(b, `,"plan_id":`...)
	b = strconv.AppendInt(b, s.PlanID, 10)
	b = append(b, `,"image_id":`...)
	b = strconv.AppendInt(b, s.ImageID, 10)
	b = append(b, `,"app_id":`...)
	b = appendIntPtr(b, s.AppID)
	b = append(b, `,"recipe_id":`...)
	b = appendIntPtr(b, s.RecipeID)
	b = append(b, `,"vcpus":`...)
	b = strconv.AppendInt(b, int64(s.VCPUs), 10)
	b = append(b, `,"memory_mb":`...)
	b = strconv.AppendInt(b, int64(s.MemoryMB), 10)
	b = append(b, `,"disk_gb":`...)
	b = strconv.AppendInt(b, int64(s.DiskGB), 10)
	b = append(b, `,"ipv4":`...)
	b = appendStringPtr(b, s.IPv4)
	b = append(b, `,"ipv6":`...)
	b = appendStringPtr(b, s.IPv6)
	b = append(b, `,"ssh_key_ids":`...)
	if s.SSHKeyIDs == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, id := range s.SSHKeyIDs {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, id, 10)
		}
		b = append(b, ']')
	}
	b = append(b, `,"created_at":`...)
	var ok bool
	if b, ok = appendTime(b, s.CreatedAt); !ok {
		return b[:n], false
	}
	return append(b, '}'), true
}

func appendIntPtr(b []byte, p *int64) []byte {
	if p == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, *p, 10)
}

func appendStringPtr(b []byte, p *string) []byte {
	if p == nil {
		return append(b, "null"...)
	}
	return appendString(b, *p)
}

// appendString appends s as encoding/json writes a string: printable ASCII other
// than the quote, the backslash and the HTML characters <, > and & as it is, and
// anything else through encoding/json itself.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			out, _ := json.Marshal(s) // a string always marshals
			return append(b, out...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendTime appends t as time.Time's MarshalJSON does; ok is false for a time it
// refuses (a year outside 0-9999, an offset of a day or more) or whose offset has
// seconds (which RFC 3339 cannot write).
func appendTime(b []byte, t time.Time) ([]byte, bool) {
	if y := t.Year(); y < 0 || y > 9999 {
		return b, false
	}
	if _, off := t.Zone(); off%60 != 0 || off <= -24*3600 || off >= 24*3600 {
		return b, false
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"'), true
}
