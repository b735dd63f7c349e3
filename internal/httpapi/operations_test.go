package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/testenv"
)

// operationPage is a page of GET /operations.
type operationPage struct {
	Data []struct {
		ID         int64   `json:"id"`
		Type       string  `json:"type"`
		ServerID   int64   `json:"server_id"` // null: 0
		VolumeID   *int64  `json:"volume_id"`
		Status     string  `json:"status"`
		FinishedAt *string `json:"finished_at"`
	} `json:"data"`
	Links struct {
		First, Last string
		Prev, Next  *string
	} `json:"links"`
	Meta struct {
		CurrentPage int    `json:"current_page"`
		From        *int   `json:"from"`
		To          *int   `json:"to"`
		LastPage    int    `json:"last_page"`
		Path        string `json:"path"`
		PerPage     int    `json:"per_page"`
		Total       int    `json:"total"`
	} `json:"meta"`
}

func (p operationPage) ids() []int64 {
	out := []int64{}
	for _, o := range p.Data {
		out = append(out, o.ID)
	}
	return out
}

func opPage(t testing.TB, c caller, path string) operationPage {
	t.Helper()
	var p operationPage
	c.Do("GET", path, nil).Want(t, http.StatusOK).JSON(t, &p)
	return p
}

// TestOperationsList: GET /operations and GET /servers/{id}/operations list the
// account's operations newest first, filtered by server and status, paginated as
// the ledger is, with the filters kept in the links; bad filters are 422 on their
// parameter; another account's server lists nothing, or is 404 in the path.
func TestOperationsList(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{RateLimit: 1000})
	a := env.NewAccount("en", "100", "")
	b := env.NewAccount("en", "100", "")
	orderedA, orderedB := order(t, a, baseOrder()), order(t, a, baseOrder())
	srvA, srvB := serverAfter(t, a, orderedA), serverAfter(t, a, orderedB)
	provA, provB := opID(t, orderedA), opID(t, orderedB)
	idA, idB := itoa(num(t, srvA["id"])), itoa(num(t, srvB["id"]))
	off := data(t, a.Do("POST", "/servers/"+idA+"/power", map[string]any{"action": "off"}).Want(t, 200))
	powerOp := waitOp(t, a, opID(t, off))
	srvX := runningServer(t, b)
	idX := itoa(num(t, srvX["id"]))
	base := env.URL + "/operations"
	reader := as(env, a, "read")

	t.Run("newest first, read scope", func(t *testing.T) {
		p := opPage(t, reader, "/operations")
		if got, want := p.ids(), []int64{num(t, powerOp["id"]), provB, provA}; !slices.Equal(got, want) {
			t.Fatalf("operations %v, want %v", got, want)
		}
		if o := p.Data[0]; o.Type != "power" || o.Status != "success" || fmt.Sprint(o.ServerID) != idA || o.FinishedAt == nil {
			t.Errorf("newest %+v", o)
		}
		if p.Meta.Total != 3 || p.Meta.PerPage != 50 || p.Meta.CurrentPage != 1 || p.Meta.LastPage != 1 || *p.Meta.From != 1 || *p.Meta.To != 3 ||
			p.Meta.Path != base || p.Links.First != base+"?page=1" || p.Links.Last != base+"?page=1" || p.Links.Prev != nil || p.Links.Next != nil {
			t.Errorf("links %+v meta %+v", p.Links, p.Meta)
		}
		opPage(t, as(env, a, "tickets"), "/operations")
	})

	t.Run("filters", func(t *testing.T) {
		for _, tc := range []struct {
			path  string
			want  []int64
			first string
		}{
			{"/operations?server_id=" + idA, []int64{num(t, powerOp["id"]), provA}, base + "?page=1&server_id=" + idA},
			{"/operations?status=success", []int64{num(t, powerOp["id"]), provB, provA}, base + "?page=1&status=success"},
			{"/operations?status=running", []int64{}, base + "?page=1&status=running"},
			{"/operations?status=error&server_id=" + idB, []int64{}, base + "?page=1&server_id=" + idB + "&status=error"},
			{"/operations?server_id=" + idX, []int64{}, base + "?page=1&server_id=" + idX}, // B's server: nothing
			{"/operations?server_id=999999", []int64{}, base + "?page=1&server_id=999999"},
			{"/servers/" + idA + "/operations", []int64{num(t, powerOp["id"]), provA}, env.URL + "/servers/" + idA + "/operations?page=1"},
			{"/servers/" + srvA["name"].(string) + "/operations?status=success", []int64{num(t, powerOp["id"]), provA},
				env.URL + "/servers/" + srvA["name"].(string) + "/operations?page=1&status=success"},
			{"/servers/" + idB + "/operations?status=running", []int64{}, env.URL + "/servers/" + idB + "/operations?page=1&status=running"},
		} {
			p := opPage(t, reader, tc.path)
			if got := p.ids(); !slices.Equal(got, tc.want) || p.Meta.Total != len(tc.want) {
				t.Errorf("%s: %v (total %d), want %v", tc.path, got, p.Meta.Total, tc.want)
			}
			if p.Links.First != tc.first {
				t.Errorf("%s: first link %q, want %q", tc.path, p.Links.First, tc.first)
			}
			if len(tc.want) == 0 && (p.Meta.From != nil || p.Meta.To != nil) {
				t.Errorf("%s: an empty page with from %v to %v", tc.path, p.Meta.From, p.Meta.To)
			}
		}
	})

	t.Run("bad filters are 422 on their parameter", func(t *testing.T) {
		for _, tc := range []struct{ path, field, id string }{
			{"/operations?server_id=0", "server_id", "validation.positive_integer"},
			{"/operations?server_id=-1", "server_id", "validation.positive_integer"},
			{"/operations?server_id=abc", "server_id", "validation.positive_integer"},
			{"/operations?server_id=", "server_id", "validation.positive_integer"},
			{"/operations?server_id=9223372036854775808", "server_id", "validation.positive_integer"},
			{"/operations?server_id=" + srvA["name"].(string), "server_id", "validation.positive_integer"},
			{"/operations?server_id=" + idA + "&server_id=" + idA, "server_id", "validation.query_repeated"},
			{"/operations?status=bogus", "status", "validation.one_of"},
			{"/operations?status=Success", "status", "validation.one_of"},
			{"/operations?status=success&status=success", "status", "validation.query_repeated"},
			{"/operations?page=0", "page", "validation.page"},
			{"/operations?page=x", "page", "validation.page"},
			{"/operations?page=1&page=2", "page", "validation.query_repeated"},
			{"/servers/" + idA + "/operations?status=done", "status", "validation.one_of"},
			{"/servers/" + idA + "/operations?page=-1", "page", "validation.page"},
		} {
			e := wantInvalid(t, reader.Do("GET", tc.path, nil), tc.field)
			want := msg("en", tc.id)
			if tc.id == "validation.one_of" {
				want = msg("en", tc.id, "values", "running, success, error")
			}
			if len(e.Errors) != 1 || e.Errors[tc.field][0] != want || e.Message != want {
				t.Errorf("%s: %v %q, want only %s: %q", tc.path, e.Errors, e.Message, tc.field, want)
			}
		}
		// All three at once: in the order of the parameters, one message.
		e := wantInvalid(t, reader.Do("GET", "/operations?page=0&status=x&server_id=x", nil), "server_id")
		if len(e.Errors) != 3 || e.Message != msg("en", "validation.positive_integer")+msg("en", "error.more_errors", "count", 2) {
			t.Errorf("three bad filters: %v %q", e.Errors, e.Message)
		}
	})

	t.Run("another account's server is 404, before a bad filter", func(t *testing.T) {
		for _, path := range []string{"/servers/" + idX + "/operations", "/servers/" + srvX["name"].(string) + "/operations?status=bogus",
			"/servers/999999/operations?page=0", "/servers/x/operations"} {
			wantNotFound(t, a.Do("GET", path, nil))
		}
		if p := opPage(t, b, "/operations"); len(p.Data) != 1 || fmt.Sprint(p.Data[0].ServerID) != idX {
			t.Errorf("B's operations: %+v", p.Data)
		}
	})

	t.Run("pages of 50", func(t *testing.T) {
		// 55 more finished power operations of server B, written as a worker would.
		finishedOperations(t, env, 55, hosting.Operation{AccountID: a.ID, ServerID: num(t, srvB["id"]), Type: hosting.OpPower,
			Action: hosting.PowerReboot})
		path := "/servers/" + idB + "/operations?status=success"
		link := func(page int) string {
			return fmt.Sprintf("%s/servers/%s/operations?page=%d&status=success", env.URL, idB, page)
		}
		p1 := opPage(t, reader, path)
		p2 := opPage(t, reader, path+"&page=2")
		p3 := opPage(t, reader, path+"&page=3")
		all := append(p1.ids(), p2.ids()...)
		if len(p1.Data) != 50 || len(p2.Data) != 6 || len(p3.Data) != 0 || all[len(all)-1] != provB ||
			!slices.IsSortedFunc(all, func(x, y int64) int { return int(y - x) }) {
			t.Fatalf("pages of %d, %d, %d: %v", len(p1.Data), len(p2.Data), len(p3.Data), all)
		}
		for _, tc := range []struct {
			p                    operationPage
			page, from, to       int
			prev, next           string
			wantPrev, wantNextOK bool
		}{
			{p1, 1, 1, 50, "", link(2), false, true},
			{p2, 2, 51, 56, link(1), "", true, false},
			{p3, 3, 0, 0, link(2), "", true, false},
		} {
			m, l := tc.p.Meta, tc.p.Links
			if m.CurrentPage != tc.page || m.LastPage != 2 || m.Total != 56 || m.PerPage != 50 || l.First != link(1) || l.Last != link(2) {
				t.Errorf("page %d: meta %+v links %+v", tc.page, m, l)
			}
			if (tc.from == 0) != (m.From == nil) || (m.From != nil && (*m.From != tc.from || *m.To != tc.to)) {
				t.Errorf("page %d: from %v to %v, want %d to %d", tc.page, m.From, m.To, tc.from, tc.to)
			}
			if (l.Prev != nil) != tc.wantPrev || (l.Prev != nil && *l.Prev != tc.prev) || (l.Next != nil) != tc.wantNextOK || (l.Next != nil && *l.Next != tc.next) {
				t.Errorf("page %d: prev %v next %v, want %q %q", tc.page, l.Prev, l.Next, tc.prev, tc.next)
			}
		}
		// The account's list pages the same operations among its others.
		if p := opPage(t, reader, "/operations?page=2"); p.Meta.Total != 58 || len(p.Data) != 8 || p.Data[len(p.Data)-1].ID != provA {
			t.Errorf("GET /operations?page=2: %d of %d, %v", len(p.Data), p.Meta.Total, p.ids())
		}
	})
}

// finishedOperations writes n operations like op, as a worker would: each started a
// second after the one before, from now, and ended a millisecond after it started.
func finishedOperations(t *testing.T, env *testenv.Env, n int, op hosting.Operation) {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	err := env.App.DB.InTx(ctx, func(tx store.Tx) error {
		for i := range n {
			op.StartedAt = now.Add(time.Duration(i) * time.Second)
			id, err := tx.StartOperation(ctx, op)
			if err != nil {
				return err
			}
			if err := tx.FinishOperation(ctx, id, hosting.OpSuccess, "", op.StartedAt.Add(time.Millisecond)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
