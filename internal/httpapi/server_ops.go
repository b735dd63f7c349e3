package httpapi

import (
	"net/http"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
)

// Reinstall, rescale and snapshots: issue "Server operations".

func (s *Server) reinstall(r *request) (int, any, error) {
	srv, err := s.writable(r)
	if err != nil {
		return 0, nil, err
	}
	var b api.ReinstallRequest
	if err := decode(r.Request, &b); err != nil {
		return 0, nil, err
	}
	srv, err = s.svc.Servers.Reinstall(r.ctx, r.p, srv.ID, b.ImageID)
	return http.StatusOK, one(toServer(srv)), err
}

func (s *Server) rescaleOptions(r *request) (int, any, error) {
	ref, err := s.serverRef(r)
	if err != nil {
		return 0, nil, err
	}
	opts, err := s.svc.Servers.RescaleOptions(r.ctx, r.p, ref)
	return http.StatusOK, list(opts, toRescaleOption), err
}

func (s *Server) rescale(r *request) (int, any, error) {
	srv, err := s.writable(r)
	if err != nil {
		return 0, nil, err
	}
	var b api.RescaleRequest
	if err := decode(r.Request, &b); err != nil {
		return 0, nil, err
	}
	srv, err = s.svc.Servers.Rescale(r.ctx, r.p, srv.ID, b.PlanID, b.UpgradeDisk != nil && *b.UpgradeDisk)
	return http.StatusOK, one(toServer(srv)), err
}

func (s *Server) listSnapshots(r *request) (int, any, error) {
	ref, err := s.serverRef(r)
	if err != nil {
		return 0, nil, err
	}
	snaps, err := s.svc.Snapshots.Snapshots(r.ctx, r.p, ref)
	return http.StatusOK, list(snaps, toSnapshot), err
}

func (s *Server) createSnapshot(r *request) (int, any, error) {
	srv, err := s.writable(r)
	if err != nil {
		return 0, nil, err
	}
	var b api.SnapshotCreate
	if err := decode(r.Request, &b); err != nil {
		return 0, nil, err
	}
	snap, err := s.svc.Snapshots.CreateSnapshot(r.ctx, r.p, srv.ID, b.Name, b.IncludeMemory != nil && *b.IncludeMemory)
	return http.StatusCreated, one(toSnapshot(snap)), err
}

// snapshotTarget resolves {id} and {snapshot} before the body is read: an unknown
// server or snapshot is 404, then a suspended server 403 (docs/api.md, Errors). The use
// case checks both again in its transaction.
func (s *Server) snapshotTarget(r *request) (hosting.Server, int64, error) {
	ref, err := s.serverRef(r)
	if err != nil {
		return hosting.Server{}, 0, err
	}
	id, err := hosting.ParseID(r.PathValue("snapshot"))
	if err != nil {
		return hosting.Server{}, 0, hosting.ErrNotFound()
	}
	srv, _, err := s.svc.Snapshots.WritableSnapshot(r.ctx, r.p, ref, id)
	return srv, id, err
}

func (s *Server) restoreSnapshot(r *request) (int, any, error) {
	srv, snapID, err := s.snapshotTarget(r)
	if err != nil {
		return 0, nil, err
	}
	if err := decode(r.Request, &struct{}{}); err != nil {
		return 0, nil, err
	}
	srv, err = s.svc.Snapshots.RestoreSnapshot(r.ctx, r.p, srv.ID, snapID)
	return http.StatusOK, one(toServer(srv)), err
}

func (s *Server) deleteSnapshot(r *request) (int, any, error) {
	srv, snapID, err := s.snapshotTarget(r)
	if err != nil {
		return 0, nil, err
	}
	deleted, err := s.svc.Snapshots.DeleteSnapshot(r.ctx, r.p, srv.ID, snapID)
	res := api.SnapshotDeletion{Result: "scheduled"}
	if deleted {
		res.Result = "deleted"
	}
	return http.StatusAccepted, one(res), err
}

func toSnapshot(s hosting.Snapshot) api.Snapshot {
	return api.Snapshot{ID: s.ID, ServerID: s.ServerID, Name: s.Name, IncludeMemory: s.IncludeMemory, SizeGB: s.SizeGB,
		Status: string(s.Status), CreatedAt: s.CreatedAt}
}

func toRescaleOption(o ops.RescaleOption) api.RescaleOption {
	return api.RescaleOption{Plan: toPlan(o.Plan, o.InStock), DiskOK: o.DiskOK}
}
