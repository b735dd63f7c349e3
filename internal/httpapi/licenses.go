package httpapi

import (
	"net/http"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/internal/hosting"
)

// ---- licenses (docs/api.md, Licenses) ----

func (s *Server) listLicenses(r *request) (int, any, error) {
	ls, err := s.svc.Licenses.Licenses(r.ctx)
	return http.StatusOK, list(ls, toLicense), err
}

func (s *Server) listServerLicenses(r *request) (int, any, error) {
	ref, err := s.serverRef(r)
	if err != nil {
		return 0, nil, err
	}
	ls, err := s.svc.Licenses.ServerLicenses(r.ctx, r.p, ref)
	return http.StatusOK, list(ls, toServerLicense), err
}

func (s *Server) addServerLicense(r *request) (int, any, error) {
	srv, err := s.writable(r)
	if err != nil {
		return 0, nil, err
	}
	var b api.ServerLicenseCreate
	if err := decode(r.Request, &b); err != nil {
		return 0, nil, err
	}
	l, err := s.svc.Licenses.AddServerLicense(r.ctx, r.p, srv.ID, b.LicenseID)
	return http.StatusCreated, one(toServerLicense(l)), err
}

func (s *Server) removeServerLicense(r *request) (int, any, error) {
	srv, err := s.writable(r)
	if err != nil {
		return 0, nil, err
	}
	id, err := hosting.ParseID(r.PathValue("license"))
	if err != nil {
		return 0, nil, hosting.ErrNotFound()
	}
	return http.StatusNoContent, nil, s.svc.Licenses.RemoveServerLicense(r.ctx, r.p, srv.ID, id)
}

func toLicense(l hosting.License) api.License {
	return api.License{ID: l.ID, Name: l.Name, Vendor: l.Vendor, Per: string(l.Per), PriceMonthly: l.PriceMonthly.String(),
		ImageIDs: l.ImageIDs, InStock: l.InStock}
}

func toServerLicense(l hosting.ServerLicense) api.ServerLicense {
	out := api.ServerLicense{ID: l.ID, LicenseID: l.LicenseID, Status: string(l.Status), StartedAt: l.StartedAt, PaidThrough: l.PaidThrough}
	if l.Key != "" && l.Held() {
		k := l.Key
		out.Key = &k
	}
	return out
}
