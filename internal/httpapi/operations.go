package httpapi

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store"
)

// opStatuses are the statuses an operation list filters on.
var opStatuses = []hosting.OpStatus{hosting.OpRunning, hosting.OpSuccess, hosting.OpError}

// listOperations answers GET /operations?server_id=&volume_id=&status=&page=: the
// account's operations, of its servers and its volumes, live and deleted, newest
// first, a page at a time (docs/api.md, Idempotency and operations). A server_id or
// volume_id of none of the account's lists nothing.
func (s *Server) listOperations(r *request) (int, any, error) {
	var f store.OperationFilter
	var v hosting.Validation
	query := url.Values{}
	f.ServerID = idFromQuery(r.Request, "server_id", &v, query)
	f.VolumeID = idFromQuery(r.Request, "volume_id", &v, query)
	f.Status = opStatusFromQuery(r.Request, &v, query)
	page := pageFromQuery(r.Request, &v)
	if err := v.Err("server_id", "volume_id", "status", "page"); err != nil {
		return 0, nil, err
	}
	return s.operationPage(r, f, query, page)
}

// idFromQuery reads the id filter name (nil: none), given once and a positive
// integer, else records an error on name. A valid one is kept in query, for the page
// links.
func idFromQuery(r *http.Request, name string, v *hosting.Validation, query url.Values) *int64 {
	raw, ok := queryValue(r, name, v)
	if !ok {
		return nil
	}
	id, err := hosting.ParseID(raw)
	if err != nil {
		v.Add(name, "validation.positive_integer")
		return nil
	}
	query.Set(name, raw)
	return &id
}

// listServerOperations answers GET /servers/{id}/operations?status=&page=: the
// operations of one of the account's servers, newest first, a page at a time. The
// server is looked up first: an unknown one is 404 before any 422.
func (s *Server) listServerOperations(r *request) (int, any, error) {
	ref, err := s.serverRef(r)
	if err != nil {
		return 0, nil, err
	}
	srv, err := s.svc.Servers.Server(r.ctx, r.p, ref)
	if err != nil {
		return 0, nil, err
	}
	var v hosting.Validation
	query := url.Values{}
	f := store.OperationFilter{ServerID: &srv.ID, Status: opStatusFromQuery(r.Request, &v, query)}
	page := pageFromQuery(r.Request, &v)
	if err := v.Err("status", "page"); err != nil {
		return 0, nil, err
	}
	return s.operationPage(r, f, query, page)
}

// opStatusFromQuery reads the status filter (nil: none), given once and one of
// opStatuses, else records an error on status. A valid one is kept in query, for the
// page links.
func opStatusFromQuery(r *http.Request, v *hosting.Validation, query url.Values) *hosting.OpStatus {
	raw, ok := queryValue(r, "status", v)
	if !ok {
		return nil
	}
	st := hosting.OpStatus(raw)
	for _, x := range opStatuses {
		if st == x {
			query.Set("status", raw)
			return &st
		}
	}
	names := make([]string, len(opStatuses))
	for i, x := range opStatuses {
		names[i] = string(x)
	}
	v.Add("status", "validation.one_of", "values", strings.Join(names, ", "))
	return nil
}

func (s *Server) operationPage(r *request, f store.OperationFilter, query url.Values, page int) (int, any, error) {
	list_, total, err := s.svc.Operations.Operations(r.ctx, r.p, f, page)
	if err != nil {
		return 0, nil, err
	}
	out := api.Page[api.Operation]{Data: make([]api.Operation, len(list_))}
	for i, o := range list_ {
		out.Data[i] = toOperation(o)
	}
	out.Links, out.Meta = s.pageOf(r.Request, query, page, ops.OperationsPageSize, len(list_), total)
	return http.StatusOK, out, nil
}
