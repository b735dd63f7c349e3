package ops

import (
	"context"
	"errors"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// Volumes (docs/api.md, Volumes): block storage an account keeps in a location and
// attaches to one of its servers there. Its creation, attachment, detachment and
// growth are operations carried out by the workers (internal/worker), each holding
// the volume, and the server it concerns when it concerns one, until it ends.

// VolumeOrder is what POST /volumes asks for. Nil pointers are fields left out.
type VolumeOrder struct {
	Name       *string
	SizeGB     *int64
	LocationID *int64
	ServerID   *int64
	ProjectID  *int64
	Format     *string
	Automount  *bool
}

// VolumeUpdate is what PATCH /volumes/{id} changes: ClearProject takes the volume
// out of its project (project_id null).
type VolumeUpdate struct {
	Name         *string
	ProjectID    *int64
	ClearProject bool
}

// Volumes lists the principal's live volumes that f admits.
func (s *Service) Volumes(ctx context.Context, p hosting.Principal, f store.VolumeFilter) ([]hosting.Volume, error) {
	out, err := s.store.Volumes(ctx, p.Account.ID, f)
	return out, internal("volumes", err)
}

// Volume finds one live volume of the principal's account; CodeNotFound otherwise.
func (s *Service) Volume(ctx context.Context, p hosting.Principal, ref hosting.VolumeRef) (hosting.Volume, error) {
	return s.volume(ctx, s.store, p, ref)
}

func (s *Service) volume(ctx context.Context, r store.Reader, p hosting.Principal, ref hosting.VolumeRef) (hosting.Volume, error) {
	v, err := r.Volume(ctx, p.Account.ID, ref)
	return v, notFoundOr("volume", err)
}

// CreateVolume makes a volume: in a location, or on a server (its location, attached
// once made). It answers at once with the volume creating; its operation makes it.
func (s *Service) CreateVolume(ctx context.Context, p hosting.Principal, o VolumeOrder) (hosting.Volume, error) {
	return s.createVolume(ctx, p, o, volumeMaker{status: hosting.VolumeCreating,
		made: func(ctx context.Context, tx store.Tx, vol *hosting.Volume, t volumeTarget) error {
			op := hosting.Operation{Type: hosting.OpCreateVolume, VolumeID: &vol.ID, Automount: deref(o.Automount)}
			if t.srv != nil {
				op.ServerID = t.srv.ID
			}
			started, err := s.startVolumeOp(ctx, tx, *vol, t.srv, op)
			vol.Operation = &started
			return err
		}})
}

// volumeMaker is how a new volume comes to be: the status it is written in, attached
// at once to the order's server or not, and what makes it once its row is written
// (CreateVolume starts its creation; a sandbox's seed makes it in the driver at once).
type volumeMaker struct {
	status   hosting.VolumeStatus
	attached bool
	made     func(ctx context.Context, tx store.Tx, vol *hosting.Volume, t volumeTarget) error
}

// createVolume checks an order of a volume as POST /volumes does (every field's
// rule, the place, the quotas, the first hour's credit) and writes the volume as m
// makes it, billed from now.
func (s *Service) createVolume(ctx context.Context, p hosting.Principal, o VolumeOrder, m volumeMaker) (hosting.Volume, error) {
	if !s.volumes {
		// The compute driver keeps none: the volume could never be made.
		return hosting.Volume{}, hosting.Invalid("location_id", "validation.volumes_not_sold")
	}
	var v hosting.Validation
	checkVolumeOrder(&v, o)
	var vol hosting.Volume
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		target, err := s.volumeTarget(ctx, tx, p, o, &v)
		if err != nil {
			return err
		}
		if err := s.checkVolumeQuotas(ctx, tx, p.Account.ID, o, &v); err != nil {
			return err
		}
		if err := v.Err(volumeFields...); err != nil {
			return err
		}
		if target.srv != nil && target.srv.Operation != nil {
			return busy(target.srv.Operation)
		}
		vol = hosting.Volume{AccountID: p.Account.ID, Name: *o.Name, SizeGB: int(*o.SizeGB), LocationID: target.loc.ID,
			ProjectID: o.ProjectID, Format: deref(o.Format), Status: m.status, CreatedAt: s.NowFor(p.Account.ID)}
		if m.attached && target.srv != nil {
			vol.ServerID = &target.srv.ID
		}
		return s.writeNewVolume(ctx, tx, &vol, target, m.made)
	})
	return vol, err
}

// volumeFields orders a volume's field errors as the API's document lists them.
var volumeFields = []string{"name", "size_gb", "location_id", "server_id", "project_id", "format", "automount"}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// CheckVolumeOrder answers what an order says wrong by itself, before anything is
// looked up (CodeValidationFailed keyed as CreateVolume's): what a form can say before
// it asks to confirm the price (internal/webui, Volumes).
func CheckVolumeOrder(o VolumeOrder) error {
	var v hosting.Validation
	checkVolumeOrder(&v, o)
	return v.Err(volumeFields...)
}

// checkVolumeOrder checks what an order says by itself.
func checkVolumeOrder(v *hosting.Validation, o VolumeOrder) {
	if o.Name == nil {
		v.Add("name", "validation.required")
	} else {
		hosting.CheckVolumeName(v, "name", *o.Name)
	}
	if o.SizeGB == nil {
		v.Add("size_gb", "validation.required")
	} else {
		hosting.CheckVolumeSize(v, "size_gb", *o.SizeGB)
	}
	if o.LocationID == nil && o.ServerID == nil {
		v.Add("location_id", "validation.volume_place")
	}
	if o.Format != nil {
		hosting.CheckVolumeFormat(v, "format", *o.Format)
	}
	if deref(o.Automount) && deref(o.Format) == "" {
		v.Add("automount", "validation.automount_needs_format")
	}
	if deref(o.Automount) && o.ServerID == nil {
		v.Add("automount", "validation.automount_needs_server")
	}
}

// volumeTarget is where a new volume goes: its location, and the server it is
// attached to once made (nil: none).
type volumeTarget struct {
	loc hosting.Location
	srv *hosting.Server
}

// volumeTarget reads and checks the order's location, server and project, adding
// what is wrong with them to v.
func (s *Service) volumeTarget(ctx context.Context, tx store.Tx, p hosting.Principal, o VolumeOrder, v *hosting.Validation) (volumeTarget, error) {
	var t volumeTarget
	if o.ServerID != nil {
		srv, err := s.attachTarget(ctx, tx, p, *o.ServerID, v)
		if err != nil {
			return t, err
		}
		t.srv = srv
	}
	locID := o.LocationID
	if t.srv != nil {
		if locID != nil && *locID != t.srv.LocationID {
			v.Add("location_id", "validation.volume_location_mismatch")
		}
		locID = &t.srv.LocationID
	}
	if locID != nil && !v.Has("location_id") {
		loc, err := tx.Location(ctx, *locID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			v.Add("location_id", "validation.location_unknown")
		case err != nil:
			return t, internal("location", err)
		case loc.VolumePriceGBHour == 0 && loc.VolumePriceGBMonth == 0:
			v.Add("location_id", "validation.volumes_not_sold")
		}
		t.loc = loc
	}
	if o.ProjectID != nil {
		if _, err := tx.Project(ctx, p.Account.ID, *o.ProjectID); errors.Is(err, store.ErrNotFound) {
			v.Add("project_id", "validation.project_unknown")
		} else if err != nil {
			return t, internal("project", err)
		}
	}
	return t, nil
}

// attachTarget reads the server a volume is to be attached to and checks that it
// can take one more, adding what is wrong to v (keyed server_id). nil when it is
// not the account's.
func (s *Service) attachTarget(ctx context.Context, tx store.Tx, p hosting.Principal, id int64, v *hosting.Validation) (*hosting.Server, error) {
	srv, err := tx.Server(ctx, p.Account.ID, hosting.ServerRef{ID: id})
	if errors.Is(err, store.ErrNotFound) {
		v.Add("server_id", "validation.server_unknown")
		return nil, nil
	}
	if err != nil {
		return nil, internal("server", err)
	}
	switch {
	case srv.Suspended:
		v.Add("server_id", "validation.server_suspended")
	case srv.Operation == nil && srv.Status != hosting.StatusRunning && srv.Status != hosting.StatusStopped:
		v.Add("server_id", "validation.server_state", "status", string(srv.Status))
	}
	attached, err := tx.ServerVolumes(ctx, srv.ID)
	if err != nil {
		return nil, internal("server volumes", err)
	}
	if len(attached) >= hosting.VolumesPerServer {
		v.Add("server_id", "validation.server_volumes_full", "max", hosting.VolumesPerServer)
	}
	return &srv, nil
}

// checkVolumeQuotas adds to v what the account's quotas refuse of a new volume: one
// more (keyed name), or its size on top of what its volumes take (size_gb).
func (s *Service) checkVolumeQuotas(ctx context.Context, tx store.Tx, account int64, o VolumeOrder, v *hosting.Validation) error {
	if err := s.checkQuota(ctx, tx, account, hosting.QuotaVolumes, v); err != nil {
		return err
	}
	if o.SizeGB == nil || v.Has("size_gb") {
		return nil
	}
	return s.checkVolumeGB(ctx, tx, account, int(*o.SizeGB), v)
}

// checkVolumeGB adds to v (size_gb) when more GB of volumes would take the account
// past its quota.
func (s *Service) checkVolumeGB(ctx context.Context, tx store.Tx, account int64, more int, v *hosting.Validation) error {
	acct, err := tx.LockAccount(ctx, account)
	if err != nil {
		return notFoundOr("account", err)
	}
	use, err := tx.Usage(ctx, account, s.NowFor(account))
	if err != nil {
		return internal("usage", err)
	}
	if use.VolumeGB+more > acct.Quotas.VolumeGB {
		v.Add("size_gb", hosting.QuotaVolumeGB.Message, "quota", acct.Quotas.VolumeGB, "used", use.VolumeGB)
	}
	return nil
}

// writeNewVolume writes a new volume, has made make it (start its creation, holding
// the server it is attached to once made), bills it, and says so.
func (s *Service) writeNewVolume(ctx context.Context, tx store.Tx, vol *hosting.Volume, t volumeTarget,
	made func(ctx context.Context, tx store.Tx, vol *hosting.Volume, t volumeTarget) error) error {
	var err error
	if vol.ID, err = tx.CreateVolume(ctx, *vol); errors.Is(err, store.ErrConflict) {
		return hosting.Invalid("name", "validation.name_taken")
	} else if err != nil {
		return internal("create volume", err)
	}
	if err := made(ctx, tx, vol, t); err != nil {
		return err
	}
	if err := s.openVolumeMeter(ctx, tx, *vol, t.loc); err != nil {
		return err
	}
	return s.emitVolume(ctx, tx, hosting.EventVolumeCreated, *vol)
}

// startVolumeOp starts a volume's operation, holding the volume and srv (nil: no
// server) until it ends: CodeBusy when either is busy.
func (s *Service) startVolumeOp(ctx context.Context, tx store.Tx, vol hosting.Volume, srv *hosting.Server, op hosting.Operation) (hosting.Operation, error) {
	if vol.Operation != nil {
		return op, volumeBusy(vol.Operation)
	}
	if srv != nil && srv.Operation != nil {
		return op, busy(srv.Operation)
	}
	op.AccountID, op.Status, op.StartedAt = vol.AccountID, hosting.OpRunning, s.NowFor(vol.AccountID)
	id, err := tx.StartOperation(ctx, op)
	if errors.Is(err, store.ErrConflict) {
		return op, changedMeanwhile()
	}
	if err != nil {
		return op, internal("start operation", err)
	}
	op.ID = id
	// Decided on srv as the transaction read it; on PostgreSQL another may have
	// changed it since (as startOp says): the write above holds its row now.
	if srv != nil {
		cur, err := tx.ServerAny(ctx, srv.ID)
		if err != nil {
			return op, internal("server", err)
		}
		if cur.DeletedAt != nil || changed(*srv, cur) {
			return op, changedMeanwhile()
		}
	}
	if err := s.enqueue(ctx, tx, OperationArgs{OperationID: id}); err != nil {
		return op, internal("enqueue", err)
	}
	return op, s.emitOperation(ctx, tx, hosting.EventOperationStarted, op, hosting.OpRunning, "")
}

// checkOrderVolumes adds to v (volume_ids) what keeps an order's volumes from being
// attached to its server once made: unknown, repeated, in another location, attached
// or not available, more than a server takes. A busy one is CodeBusy.
func checkOrderVolumes(ctx context.Context, tx store.Tx, account int64, o Order, loc hosting.Location, v *hosting.Validation) error {
	if len(o.VolumeIDs) > hosting.VolumesPerServer {
		v.Add("volume_ids", "validation.server_volumes_full", "max", hosting.VolumesPerServer)
		return nil
	}
	seen := map[int64]bool{}
	for _, id := range o.VolumeIDs {
		if seen[id] {
			v.Add("volume_ids", "validation.volume_repeated", "id", id)
			continue
		}
		seen[id] = true
		vol, err := tx.Volume(ctx, account, hosting.VolumeRef{ID: id})
		if errors.Is(err, store.ErrNotFound) {
			v.Add("volume_ids", "validation.volume_unknown", "id", id)
			continue
		} else if err != nil {
			return internal("volume", err)
		}
		switch {
		case vol.Operation != nil:
			return volumeBusy(vol.Operation)
		case vol.ServerID != nil:
			v.Add("volume_ids", "validation.volume_attached", "server", *vol.ServerID)
		case vol.Status != hosting.VolumeAvailable:
			v.Add("volume_ids", "validation.volume_state", "status", string(vol.Status))
		case loc.ID != 0 && vol.LocationID != loc.ID:
			v.Add("volume_ids", "validation.volume_location_mismatch")
		}
	}
	return nil
}

// VolumesAttached: the volumes a provisioning held are attached to its server.
func (s *Service) VolumesAttached(serverID int64, vols []hosting.Volume) Change {
	return func(ctx context.Context, tx store.Tx) error {
		for _, vol := range vols {
			id := serverID
			if err := tx.SetVolumeServer(ctx, vol.ID, &id); err != nil {
				return err
			}
			vol.ServerID = &id
			if err := s.emitVolume(ctx, tx, hosting.EventVolumeAttached, vol); err != nil {
				return err
			}
		}
		return nil
	}
}

// Changes is each of cs in turn.
func Changes(cs ...Change) Change {
	return func(ctx context.Context, tx store.Tx) error {
		for _, c := range cs {
			if c == nil {
				continue
			}
			if err := c(ctx, tx); err != nil {
				return err
			}
		}
		return nil
	}
}

// volumeBusy is CodeBusy for a volume busy with op (its own, or its server's
// deletion or provisioning holding it).
func volumeBusy(op *hosting.Operation) error {
	e := hosting.Errorf(hosting.CodeBusy, "error.volume_busy", "operation", string(op.Type))
	e.Operation, e.RetryAfter = op, 5
	return e
}
