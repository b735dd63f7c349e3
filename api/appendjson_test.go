package api

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

func ptr[T any](v T) *T { return &v }

func checkAppend(t *testing.T, s Server) {
	t.Helper()
	want, wantErr := json.Marshal(One[Server]{Data: s})
	got, ok := One[Server]{Data: s}.AppendJSON([]byte("prefix"))
	if !ok {
		if !bytes.Equal(got, []byte("prefix")) {
			t.Errorf("not ok, but b changed to %q", got)
		}
		return // the caller marshals: whatever encoding/json says stands
	}
	if wantErr != nil {
		t.Errorf("AppendJSON wrote %s where json.Marshal fails: %v", got, wantErr)
		return
	}
	if string(got) != "prefix"+string(want) {
		t.Errorf("AppendJSON\n got %s\nwant prefix%s", got, want)
	}
}

// AppendJSON writes what json.Marshal writes, for every shape a server takes.
func TestAppendJSONIsMarshal(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 26, 2, 30, 0, 123_456_789, time.UTC)
	full := Server{ID: 1 << 62, Name: "web-1", DisplayName: "Web 1", ProjectID: ptr(int64(7)), Status: "running",
		Operation: &OperationRef{ID: 9, Type: "power_off", StartedAt: at}, LocationID: 1, PlanID: 2, ImageID: 3,
		AppID: ptr(int64(4)), RecipeID: ptr(int64(-5)), VCPUs: 2, MemoryMB: 4096, DiskGB: 80,
		IPv4: ptr("203.0.113.10"), IPv6: ptr("2001:db8::1"), SSHKeyIDs: []int64{1, 2, 3}, CreatedAt: at}
	cases := map[string]Server{
		"zero":     {},
		"full":     full,
		"no keys":  func() Server { s := full; s.SSHKeyIDs = []int64{}; return s }(),
		"nil keys": func() Server { s := full; s.SSHKeyIDs = nil; return s }(),
		"html":     func() Server { s := full; s.DisplayName = `<script>alert("x")</script> & co`; return s }(),
		"unicode":  func() Server { s := full; s.DisplayName = "Größe 日本 \u2028\u2029 😀"; return s }(),
		"control":  func() Server { s := full; s.DisplayName = "a\x00b\tc\nd\x7f"; return s }(),
		"bad utf8": func() Server { s := full; s.Name = "bad\xff\xfe"; return s }(),
		"quote":    func() Server { s := full; s.Name = `a"b\c/d`; return s }(),
		"empty":    func() Server { s := full; s.Name, s.DisplayName = "", ""; return s }(),
		"min ids": func() Server {
			s := full
			s.ID, s.LocationID, s.VCPUs = -1<<63, -1, -1<<31
			return s
		}(),
		"zone":         func() Server { s := full; s.CreatedAt = at.In(time.FixedZone("X", -(9*3600 + 30*60))); return s }(),
		"zone seconds": func() Server { s := full; s.CreatedAt = at.In(time.FixedZone("X", 3600+7)); return s }(),
		"zone too far": func() Server { s := full; s.CreatedAt = at.In(time.FixedZone("X", 24*3600)); return s }(),
		"year 10000":   func() Server { s := full; s.CreatedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC); return s }(),
		"year -1": func() Server {
			s := full
			s.Operation = &OperationRef{StartedAt: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)}
			return s
		}(),
		"monotonic":     func() Server { s := full; s.CreatedAt = time.Now(); return s }(),
		"whole seconds": func() Server { s := full; s.CreatedAt = at.Truncate(time.Second); return s }(),
		"local":         func() Server { s := full; s.CreatedAt = at.Local(); return s }(),
	}
	for name, s := range cases {
		t.Run(name, func(t *testing.T) { checkAppend(t, s) })
	}
}

func FuzzAppendJSON(f *testing.F) {
	f.Add("web-1", "Web <1> & \u2028", int64(7), int64(1764124200), int64(123456789), 3600, true)
	f.Add("", "", int64(-1), int64(-62135596800), int64(0), 0, false)
	f.Fuzz(func(t *testing.T, name, display string, id, sec, nsec int64, offset int, withOp bool) {
		at := time.Unix(sec, nsec).In(time.FixedZone("f", offset%(30*3600)))
		s := Server{ID: id, Name: name, DisplayName: display, Status: name, CreatedAt: at, SSHKeyIDs: []int64{id, -id},
			IPv4: &display, ProjectID: &id}
		if withOp {
			s.Operation = &OperationRef{ID: id, Type: display, StartedAt: at.Add(time.Duration(nsec))}
		}
		checkAppend(t, s)
	})
}

func BenchmarkServerJSON(b *testing.B) {
	at := time.Date(2026, 11, 26, 2, 30, 0, 123_456_789, time.UTC)
	s := One[Server]{Data: Server{ID: 4242, Name: "server-004242", DisplayName: "server-004242", Status: "running",
		LocationID: 1, PlanID: 2, ImageID: 3, VCPUs: 2, MemoryMB: 4096, DiskGB: 80,
		IPv4: ptr("203.0.113.10"), IPv6: ptr("2001:db8::1"), SSHKeyIDs: []int64{}, CreatedAt: at}}
	b.Run("Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(s)
		}
	})
	b.Run("AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 1024)
		for b.Loop() {
			buf, _ = s.AppendJSON(buf[:0])
		}
	})
}
