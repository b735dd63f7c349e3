package webui

import (
	"net/http"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store"
)

// serverOpsShown is how many operations a server's page shows, the newest; a link
// leads to all of them, a page of ops.OperationsPageSize at a time (the API's
// GET /servers/{id}/operations reads the same list).
const serverOpsShown = 10

// opRow is one operation as the history table shows it.
type opRow struct {
	ID         int64
	Type       string // in words
	Status     hosting.OpStatus
	StatusText string
	StartedAt  time.Time
	FinishedAt *time.Time
	Error      string
}

// opTable is what the "operations" template draws.
type opTable struct {
	V    *view
	Rows []opRow
}

func (c *Console) opRows(r *req, list []hosting.Operation) []opRow {
	rows := make([]opRow, len(list))
	for i, op := range list {
		typ := c.opTypeText(r.lang, op.Type)
		if op.Type == hosting.OpPower && op.Action != "" {
			typ += " · " + r.T("console.power."+string(op.Action))
		}
		rows[i] = opRow{ID: op.ID, Type: typ, Status: op.Status, StatusText: r.T("console.opstatus." + string(op.Status)),
			StartedAt: op.StartedAt, FinishedAt: op.FinishedAt, Error: op.Error}
	}
	return rows
}

// OpTable wraps a server's operations for the "operations" template.
func (v *view) OpTable(rows []opRow) opTable { return opTable{V: v, Rows: rows} }

// serverOps are the newest operations of a server for its page, and how many it has.
func (c *Console) serverOps(r *req, srv hosting.Server) ([]opRow, int, error) {
	list, total, err := c.svc.Operations.Operations(r.ctx(), r.p, store.OperationFilter{ServerID: &srv.ID}, 1)
	if err != nil {
		return nil, 0, err
	}
	return c.opRows(r, list[:min(len(list), serverOpsShown)]), total, nil
}

// serverOperationsPage lists all of a server's operations, newest first, a page at a
// time.
func (c *Console) serverOperationsPage(r *req) error {
	srv, err := c.pathServer(r)
	if err != nil {
		return err
	}
	page, err := pageParam(r)
	if err != nil {
		return err
	}
	list, total, err := c.svc.Operations.Operations(r.ctx(), r.p, store.OperationFilter{ServerID: &srv.ID}, page)
	if err != nil {
		return err
	}
	c.render(r, http.StatusOK, "serveroperations", "console.operations.title", "servers", map[string]any{
		"S": srv, "Rows": c.opRows(r, list), "Total": total,
		"Pager": newPager(r, "/servers/"+itoa(srv.ID)+"/operations", page, lastPage(total, ops.OperationsPageSize), "")})
	return nil
}
