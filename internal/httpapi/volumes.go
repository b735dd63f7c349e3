package httpapi

import (
	"net/http"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store"
)

// ---- volumes (docs/api.md, Volumes) ----

// volumeRef reads the {id} of a volume path: an id or a name (404 when it can name
// none).
func volumeRef(r *http.Request) (hosting.VolumeRef, error) {
	ref, ok := hosting.ParseVolumeRef(r.PathValue("id"))
	if !ok {
		return ref, hosting.ErrNotFound()
	}
	return ref, nil
}

// volume finds the path's volume before a body is read: 404 comes before 422.
func (s *Server) volume(r *request) (hosting.VolumeRef, error) {
	ref, err := volumeRef(r.Request)
	if err != nil {
		return ref, err
	}
	v, err := s.svc.Volumes.Volume(r.ctx, r.p, ref)
	return hosting.VolumeRef{ID: v.ID}, err
}

func (s *Server) listVolumes(r *request) (int, any, error) {
	var f store.VolumeFilter
	var v hosting.Validation
	for _, p := range []struct {
		name string
		dst  **int64
	}{{"server_id", &f.ServerID}, {"project_id", &f.ProjectID}} {
		if raw, ok := queryValue(r.Request, p.name, &v); ok {
			if id, err := hosting.ParseID(raw); err != nil {
				v.Add(p.name, "validation.positive_integer")
			} else {
				*p.dst = &id
			}
		}
	}
	if err := v.Err("server_id", "project_id"); err != nil {
		return 0, nil, err
	}
	vs, err := s.svc.Volumes.Volumes(r.ctx, r.p, f)
	return http.StatusOK, list(vs, toVolume), err
}

func (s *Server) getVolume(r *request) (int, any, error) {
	ref, err := volumeRef(r.Request)
	if err != nil {
		return 0, nil, err
	}
	v, err := s.svc.Volumes.Volume(r.ctx, r.p, ref)
	return http.StatusOK, one(toVolume(v)), err
}

func (s *Server) createVolume(r *request) (int, any, error) {
	var b api.VolumeCreate
	if err := decode(r.Request, &b); err != nil {
		return 0, nil, err
	}
	o := ops.VolumeOrder{Name: b.Name, SizeGB: b.SizeGB, LocationID: b.LocationID, ServerID: b.ServerID, Format: b.Format,
		Automount: b.Automount}
	if b.ProjectID.Set && !b.ProjectID.Null {
		o.ProjectID = &b.ProjectID.Value
	}
	v, err := s.svc.Volumes.CreateVolume(r.ctx, r.p, o)
	return http.StatusCreated, one(toVolume(v)), err
}

func (s *Server) patchVolume(r *request) (int, any, error) {
	ref, err := s.volume(r)
	if err != nil {
		return 0, nil, err
	}
	var b api.VolumeUpdate
	if err := decode(r.Request, &b); err != nil {
		return 0, nil, err
	}
	u := ops.VolumeUpdate{Name: b.Name, ClearProject: b.ProjectID.Set && b.ProjectID.Null}
	if b.ProjectID.Set && !b.ProjectID.Null {
		u.ProjectID = &b.ProjectID.Value
	}
	v, err := s.svc.Volumes.UpdateVolume(r.ctx, r.p, ref, u)
	return http.StatusOK, one(toVolume(v)), err
}

func (s *Server) deleteVolume(r *request) (int, any, error) {
	ref, err := volumeRef(r.Request)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, s.svc.Volumes.DeleteVolume(r.ctx, r.p, ref)
}

func (s *Server) attachVolume(r *request) (int, any, error) {
	ref, err := s.volume(r)
	if err != nil {
		return 0, nil, err
	}
	var b api.VolumeAttach
	if err := decode(r.Request, &b); err != nil {
		return 0, nil, err
	}
	v, err := s.svc.Volumes.AttachVolume(r.ctx, r.p, ref, b.ServerID, b.Automount)
	return http.StatusOK, one(toVolume(v)), err
}

func (s *Server) detachVolume(r *request) (int, any, error) {
	ref, err := s.volume(r)
	if err != nil {
		return 0, nil, err
	}
	if err := decode(r.Request, &struct{}{}); err != nil {
		return 0, nil, err
	}
	v, err := s.svc.Volumes.DetachVolume(r.ctx, r.p, ref)
	return http.StatusOK, one(toVolume(v)), err
}

func (s *Server) resizeVolume(r *request) (int, any, error) {
	ref, err := s.volume(r)
	if err != nil {
		return 0, nil, err
	}
	var b api.VolumeResize
	if err := decode(r.Request, &b); err != nil {
		return 0, nil, err
	}
	v, err := s.svc.Volumes.ResizeVolume(r.ctx, r.p, ref, b.SizeGB)
	return http.StatusOK, one(toVolume(v)), err
}
