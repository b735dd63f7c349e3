package httpapi_test

import (
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/testenv"
)

// volumeOps is an account with volumes and their operations, newest last: v1 made in
// a location (create1, no server), attached to srv (provisioned by prov; attach1),
// v2 made (create2) and deleted; and another account's volume vx.
type volumeOps struct {
	env                                 *testenv.Env
	a, b                                *testenv.Account
	v1, v2, vx, srv                     string
	create1, prov, attach1, create2, cx int64
}

// newVolume posts a detached volume in location 1 for c and waits for its creation:
// its id and its creation's operation.
func newVolume(t *testing.T, c caller) (string, int64) {
	t.Helper()
	vol := data(t, c.Do("POST", "/volumes", map[string]any{"name": uniqueName("vol"), "size_gb": 10, "location_id": 1}).Want(t, 201))
	volumeAfter(t, c, vol)
	return itoa(num(t, vol["id"])), opID(t, vol)
}

func newVolumeOps(t *testing.T) *volumeOps {
	env := testenv.New(t, testenv.Options{RateLimit: 1000})
	o := &volumeOps{env: env, a: env.NewAccount("en", "100", ""), b: env.NewAccount("de", "100", "")}
	o.v1, o.create1 = newVolume(t, o.a)
	ordered := order(t, o.a, baseOrder())
	o.prov, o.srv = opID(t, ordered), itoa(num(t, serverAfter(t, o.a, ordered)["id"]))
	att := data(t, o.a.Do("POST", "/volumes/"+o.v1+"/attach", map[string]any{"server_id": num(t, ordered["id"])}).Want(t, 200))
	o.attach1 = opID(t, att)
	volumeAfter(t, o.a, att)
	o.v2, o.create2 = newVolume(t, o.a)
	o.a.Do("DELETE", "/volumes/"+o.v2, nil).Want(t, 204)
	o.vx, o.cx = newVolume(t, o.b)
	return o
}

// TestOperationsOfVolumes: GET /operations lists a volume's operations among the
// account's, those without a server too (server_id null), and volume_id keeps one
// volume's, as server_id keeps one server's: a deleted volume's still, another
// account's or none's an empty page; the filter stays in the page links; a bad
// volume_id is 422 on volume_id, in the account's language.
func TestOperationsOfVolumes(t *testing.T) {
	t.Parallel()
	o := newVolumeOps(t)
	reader := as(o.env, o.a, "read")
	p := opPage(t, reader, "/operations")
	if got, want := p.ids(), []int64{o.create2, o.attach1, o.prov, o.create1}; !slices.Equal(got, want) {
		t.Fatalf("the account's operations %v, want %v", got, want)
	}
	if c := p.Data[3]; c.Type != "create_volume" || c.ServerID != 0 || c.VolumeID == nil || itoa(*c.VolumeID) != o.v1 {
		t.Errorf("a volume's creation without a server: %+v", c)
	}
	if a := p.Data[1]; a.Type != "attach_volume" || itoa(a.ServerID) != o.srv || a.VolumeID == nil || itoa(*a.VolumeID) != o.v1 {
		t.Errorf("its attachment: %+v", a)
	}
	if p := opPage(t, o.b, "/operations"); !slices.Equal(p.ids(), []int64{o.cx}) {
		t.Errorf("the other account's operations: %v, want its volume's creation %d", p.ids(), o.cx)
	}
	t.Run("filters", func(t *testing.T) { volumeFilters(t, o, reader) })
	t.Run("bad volume_id", func(t *testing.T) { badVolumeFilters(t, o, reader) })
	t.Run("pages", func(t *testing.T) { volumeOpPages(t, o, reader) })
}

func volumeFilters(t *testing.T, o *volumeOps, reader caller) {
	base := o.env.URL + "/operations?page=1&"
	for _, tc := range []struct {
		query string
		want  []int64
		first string
	}{
		{"volume_id=" + o.v1, []int64{o.attach1, o.create1}, "volume_id=" + o.v1},
		{"status=success&volume_id=" + o.v1, []int64{o.attach1, o.create1}, "status=success&volume_id=" + o.v1},
		{"volume_id=" + o.v1 + "&status=running", []int64{}, "status=running&volume_id=" + o.v1},
		{"volume_id=" + o.v1 + "&server_id=" + o.srv, []int64{o.attach1}, "server_id=" + o.srv + "&volume_id=" + o.v1},
		{"server_id=" + o.srv, []int64{o.attach1, o.prov}, "server_id=" + o.srv},
		{"volume_id=" + o.v2, []int64{o.create2}, "volume_id=" + o.v2}, // deleted: its history stays
		{"volume_id=" + o.vx, []int64{}, "volume_id=" + o.vx},          // B's volume: nothing
		{"volume_id=999999", []int64{}, "volume_id=999999"},
		{"volume_id=9223372036854775807", []int64{}, "volume_id=9223372036854775807"}, // 2^63-1, the largest id
	} {
		p := opPage(t, reader, "/operations?"+tc.query)
		if got := p.ids(); !slices.Equal(got, tc.want) || p.Meta.Total != len(tc.want) {
			t.Errorf("%s: %v (total %d), want %v", tc.query, got, p.Meta.Total, tc.want)
		}
		if p.Links.First != base+tc.first || p.Links.Last != base+tc.first {
			t.Errorf("%s: links %q %q, want %q", tc.query, p.Links.First, p.Links.Last, base+tc.first)
		}
		if len(tc.want) == 0 && (p.Meta.From != nil || p.Meta.To != nil) {
			t.Errorf("%s: an empty page with from %v to %v", tc.query, p.Meta.From, p.Meta.To)
		}
	}
}

func badVolumeFilters(t *testing.T, o *volumeOps, reader caller) {
	for _, tc := range []struct{ query, id string }{
		{"volume_id=0", "validation.positive_integer"},
		{"volume_id=-1", "validation.positive_integer"},
		{"volume_id=9223372036854775808", "validation.positive_integer"}, // 2^63
		{"volume_id=", "validation.positive_integer"},
		{"volume_id=abc", "validation.positive_integer"},
		{"volume_id=1.5", "validation.positive_integer"},
		{"volume_id=+1", "validation.positive_integer"},
		{"volume_id=01", "validation.positive_integer"},
		{"volume_id=%201", "validation.positive_integer"},
		{"volume_id=vol-1", "validation.positive_integer"}, // a name is no id here
		{"volume_id=" + o.v1 + "&volume_id=" + o.v1, "validation.query_repeated"},
		{"volume_id=" + o.v1 + "&volume_id=", "validation.query_repeated"},
	} {
		e := wantInvalid(t, reader.Do("GET", "/operations?"+tc.query, nil), "volume_id")
		if want := msg("en", tc.id); len(e.Errors) != 1 || e.Errors["volume_id"][0] != want || e.Message != want {
			t.Errorf("%s: %v %q, want only volume_id: %q", tc.query, e.Errors, e.Message, want)
		}
	}
	// Every filter bad at once: in the order of the parameters, one message.
	e := wantInvalid(t, reader.Do("GET", "/operations?page=0&status=x&volume_id=x&server_id=x", nil), "volume_id")
	if len(e.Errors) != 4 || e.Message != msg("en", "validation.positive_integer")+msg("en", "error.more_errors", "count", 3) {
		t.Errorf("four bad filters: %v %q", e.Errors, e.Message)
	}
	e = wantInvalid(t, o.b.Do("GET", "/operations?volume_id=0", nil), "volume_id")
	if want := msg("de", "validation.positive_integer"); e.Errors["volume_id"][0] != want || want == msg("en", "validation.positive_integer") {
		t.Errorf("in German: %v, want %q", e.Errors, want)
	}
}

// volumeOpPages: 55 more finished operations of v1, written as a worker would, page
// by 50 with volume_id in every link.
func volumeOpPages(t *testing.T, o *volumeOps, reader caller) {
	vid, err := strconv.ParseInt(o.v1, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	finishedOperations(t, o.env, 55, hosting.Operation{AccountID: o.a.ID, VolumeID: &vid, Type: hosting.OpResizeVolume, SizeGB: 10})
	link := func(page int) string {
		return fmt.Sprintf("%s/operations?page=%d&volume_id=%s", o.env.URL, page, o.v1)
	}
	p1, p2 := opPage(t, reader, "/operations?volume_id="+o.v1), opPage(t, reader, "/operations?volume_id="+o.v1+"&page=2")
	all := append(p1.ids(), p2.ids()...)
	if len(p1.Data) != 50 || len(p2.Data) != 7 || p2.Meta.Total != 57 || !slices.Equal(all[55:], []int64{o.attach1, o.create1}) {
		t.Fatalf("pages of %d and %d of %d: %v", len(p1.Data), len(p2.Data), p2.Meta.Total, all)
	}
	if l := p1.Links; l.First != link(1) || l.Last != link(2) || l.Prev != nil || l.Next == nil || *l.Next != link(2) {
		t.Errorf("page 1's links %+v", l)
	}
	if l := p2.Links; l.Prev == nil || *l.Prev != link(1) || l.Next != nil {
		t.Errorf("page 2's links %+v", l)
	}
}
