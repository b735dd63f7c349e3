package ops

import (
	"context"
	"errors"
	"strings"

	"github.com/berthhq/berth/internal/billing"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// AttachVolume attaches a volume to a server of the same account and location,
// running or stopped; its operation holds both until it ends.
func (s *Service) AttachVolume(ctx context.Context, p hosting.Principal, ref hosting.VolumeRef, serverID *int64, automount *bool) (hosting.Volume, error) {
	var vol hosting.Volume
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		if vol, err = s.volume(ctx, tx, p, ref); err != nil {
			return err
		}
		var v hosting.Validation
		var srv *hosting.Server
		if serverID == nil {
			v.Add("server_id", "validation.required")
		} else if srv, err = s.attachTarget(ctx, tx, p, *serverID, &v); err != nil {
			return err
		}
		checkAttach(&v, vol, srv, deref(automount))
		if err := v.Err("server_id", "automount"); err != nil {
			return err
		}
		op := hosting.Operation{Type: hosting.OpAttachVolume, ServerID: srv.ID, VolumeID: &vol.ID, Automount: deref(automount)}
		started, err := s.startVolumeOp(ctx, tx, vol, srv, op)
		vol.Operation = &started
		return err
	})
	return vol, err
}

// checkAttach adds to v what keeps vol from being attached to srv (nil: unknown).
func checkAttach(v *hosting.Validation, vol hosting.Volume, srv *hosting.Server, automount bool) {
	switch {
	case vol.ServerID != nil:
		v.Add("server_id", "validation.volume_attached", "server", *vol.ServerID)
	case srv != nil && srv.LocationID != vol.LocationID:
		v.Add("server_id", "validation.volume_location_mismatch")
	}
	if vol.Operation == nil && vol.Status != hosting.VolumeAvailable {
		v.Add("volume", "validation.volume_state", "status", string(vol.Status))
	}
	if automount && vol.Format == "" {
		v.Add("automount", "validation.automount_needs_format")
	}
}

// DetachVolume detaches a volume from its server; its operation holds both until it
// ends. From a running server the guest must release the disk (docs/api.md,
// Volumes).
func (s *Service) DetachVolume(ctx context.Context, p hosting.Principal, ref hosting.VolumeRef) (hosting.Volume, error) {
	var vol hosting.Volume
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		if vol, err = s.volume(ctx, tx, p, ref); err != nil {
			return err
		}
		if vol.ServerID == nil {
			return hosting.Invalid("server_id", "validation.volume_not_attached")
		}
		srv, err := tx.ServerAny(ctx, *vol.ServerID)
		if err != nil {
			return internal("server", err)
		}
		op := hosting.Operation{Type: hosting.OpDetachVolume, ServerID: srv.ID, VolumeID: &vol.ID}
		started, err := s.startVolumeOp(ctx, tx, vol, &srv, op)
		vol.Operation = &started
		return err
	})
	return vol, err
}

// ResizeVolume grows a volume, attached or not; its operation holds the volume, and
// the server it is attached to. It is billed at the new size from its next hour.
func (s *Service) ResizeVolume(ctx context.Context, p hosting.Principal, ref hosting.VolumeRef, sizeGB *int64) (hosting.Volume, error) {
	var vol hosting.Volume
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		if vol, err = s.volume(ctx, tx, p, ref); err != nil {
			return err
		}
		var v hosting.Validation
		checkGrowth(&v, vol, sizeGB)
		if !v.Has("size_gb") {
			if err := s.checkVolumeGB(ctx, tx, p.Account.ID, int(*sizeGB)-vol.SizeGB, &v); err != nil {
				return err
			}
		}
		if vol.Operation == nil && vol.Status != hosting.VolumeAvailable {
			v.Add("volume", "validation.volume_state", "status", string(vol.Status))
		}
		if err := v.Err("size_gb"); err != nil {
			return err
		}
		var srv *hosting.Server
		if vol.ServerID != nil {
			cur, err := tx.ServerAny(ctx, *vol.ServerID)
			if err != nil {
				return internal("server", err)
			}
			srv = &cur
		}
		op := hosting.Operation{Type: hosting.OpResizeVolume, VolumeID: &vol.ID, SizeGB: int(*sizeGB)}
		if srv != nil {
			op.ServerID = srv.ID
		}
		started, err := s.startVolumeOp(ctx, tx, vol, srv, op)
		vol.Operation = &started
		return err
	})
	return vol, err
}

// CheckVolumeGrowth answers what is wrong with growing vol to sizeGB by itself, before
// the quota is looked at (CodeValidationFailed on size_gb, as ResizeVolume's): what a
// form can say before it asks to confirm the new price (internal/webui, Volumes).
func CheckVolumeGrowth(vol hosting.Volume, sizeGB *int64) error {
	var v hosting.Validation
	checkGrowth(&v, vol, sizeGB)
	return v.Err()
}

// checkGrowth adds to v (size_gb) what is wrong with growing vol to sizeGB.
func checkGrowth(v *hosting.Validation, vol hosting.Volume, sizeGB *int64) {
	switch {
	case sizeGB == nil:
		v.Add("size_gb", "validation.required")
	case *sizeGB <= int64(vol.SizeGB):
		v.Add("size_gb", "validation.volume_grow_only", "size", vol.SizeGB)
	default:
		hosting.CheckVolumeSize(v, "size_gb", *sizeGB)
	}
}

// UpdateVolume renames a volume or moves it between projects; allowed while it is
// busy.
func (s *Service) UpdateVolume(ctx context.Context, p hosting.Principal, ref hosting.VolumeRef, u VolumeUpdate) (hosting.Volume, error) {
	var v hosting.Validation
	if u.Name != nil {
		hosting.CheckVolumeName(&v, "name", *u.Name)
	}
	var vol hosting.Volume
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		if vol, err = s.volume(ctx, tx, p, ref); err != nil {
			return err
		}
		if u.ProjectID != nil {
			if _, err := tx.Project(ctx, p.Account.ID, *u.ProjectID); errors.Is(err, store.ErrNotFound) {
				v.Add("project_id", "validation.project_unknown")
			} else if err != nil {
				return internal("project", err)
			}
		}
		if err := v.Err("name", "project_id"); err != nil {
			return err
		}
		was := vol
		if u.Name != nil {
			vol.Name = *u.Name
		}
		if u.ClearProject {
			vol.ProjectID = nil
		} else if u.ProjectID != nil {
			vol.ProjectID = u.ProjectID
		}
		if err := tx.UpdateVolume(ctx, vol); errors.Is(err, store.ErrConflict) {
			return hosting.Invalid("name", "validation.name_taken")
		} else if err != nil {
			return internal("update volume", err)
		}
		if changes := volumeChanges(was, vol); len(changes) > 0 {
			return s.emitVolume(ctx, tx, hosting.EventVolumeUpdated, vol, changes...)
		}
		return nil
	})
	return vol, err
}

func volumeChanges(was, now hosting.Volume) []string {
	var out []string
	if was.Name != now.Name {
		out = append(out, "name")
	}
	if (was.ProjectID == nil) != (now.ProjectID == nil) || (was.ProjectID != nil && *was.ProjectID != *now.ProjectID) {
		out = append(out, "project_id")
	}
	return out
}

// DeleteVolume deletes a detached volume at once; its data is removed in the
// background (VolumeDeleteArgs). Attached: 422 on server_id; busy: CodeBusy.
func (s *Service) DeleteVolume(ctx context.Context, p hosting.Principal, ref hosting.VolumeRef) error {
	return s.store.InTx(ctx, func(tx store.Tx) error {
		vol, err := s.volume(ctx, tx, p, ref)
		if err != nil {
			return err
		}
		if vol.Operation != nil {
			return volumeBusy(vol.Operation)
		}
		if vol.ServerID != nil {
			return hosting.Invalid("server_id", "validation.volume_detach_first")
		}
		now := s.NowFor(vol.AccountID)
		if err := tx.DeleteVolume(ctx, vol.ID, now); err != nil {
			return internal("delete volume", err)
		}
		if err := tx.StopMeter(ctx, hosting.ResourceVolume, vol.ID, now); err != nil && !errors.Is(err, store.ErrNotFound) {
			return internal("stop meter", err)
		}
		if err := s.enqueue(ctx, tx, VolumeDeleteArgs{VolumeID: vol.ID}); err != nil {
			return internal("enqueue", err)
		}
		return s.emitVolume(ctx, tx, hosting.EventVolumeDeleted, vol)
	})
}

// emitVolume emits typ about vol as it now is; changes names what volume.updated
// changed.
func (s *Service) emitVolume(ctx context.Context, tx store.Tx, typ hosting.EventType, vol hosting.Volume, changes ...string) error {
	return s.emit(ctx, tx, vol.AccountID, typ, hosting.EventResource{Type: "volume", ID: vol.ID},
		hosting.VolumeEventData{ID: vol.ID, Name: vol.Name, SizeGB: vol.SizeGB, Status: vol.Status, ServerID: vol.ServerID, Changes: changes})
}

// VolumePrice is what a volume of sizeGB costs in loc (docs/api.md, Volumes): each
// started hour, and at most a calendar month. The console shows it before a volume is
// made or grown; the meter bills it.
func VolumePrice(sizeGB int, loc hosting.Location) (hourly, monthly hosting.Money) {
	return billing.SnapshotRate(sizeGB, loc.VolumePriceGBHour), billing.SnapshotRate(sizeGB, loc.VolumePriceGBMonth)
}

// volumeRate is the meter's rate and cap of a volume of sizeGB in loc.
func volumeRate(sizeGB int, loc hosting.Location) (hosting.Money, *hosting.Money) {
	hour, month := VolumePrice(sizeGB, loc)
	return hour, &month
}

// openVolumeMeter starts billing a new volume and charges its first hour, which the
// credit must cover (CodeInsufficientCredit on size_gb otherwise).
func (s *Service) openVolumeMeter(ctx context.Context, tx store.Tx, vol hosting.Volume, loc hosting.Location) error {
	now := vol.CreatedAt
	rate, cap := volumeRate(vol.SizeGB, loc)
	first := billing.HourCharge(rate, cap, 0)
	if first > 0 {
		_, err := tx.AddCoveredTransaction(ctx, hosting.Transaction{AccountID: vol.AccountID, Type: hosting.TxCharge, Amount: -first,
			ResourceType: hosting.ResourceVolume, ResourceID: &vol.ID, ResourceName: vol.Name, PeriodStart: &now, CreatedAt: now})
		if errors.Is(err, store.ErrInsufficientCredit) {
			var v hosting.Validation
			v.Add("size_gb", "validation.volume_credit_too_low", "amount", first.String())
			v.SetCode(hosting.CodeInsufficientCredit)
			return v.Err()
		}
		if err != nil {
			return internal("first hour", err)
		}
	}
	next := now.Add(billing.Hour)
	_, err := tx.OpenMeter(ctx, hosting.Meter{AccountID: vol.AccountID, ResourceType: hosting.ResourceVolume, ResourceID: vol.ID,
		ResourceName: vol.Name, Rate: rate, MonthlyCap: cap, StartedAt: now, BilledFrom: next,
		MonthStart: billing.MonthStart(now), MonthCharged: first})
	return internal("open meter", err)
}

// ---- what volume operations end with (internal/worker) ----

// VolumeCreated: the volume is made and available, attached to the operation's
// server when it names one.
func (s *Service) VolumeCreated(op hosting.Operation) Change {
	return func(ctx context.Context, tx store.Tx) error {
		vol, err := s.opVolume(ctx, tx, op)
		if err != nil {
			return err
		}
		if err := tx.SetVolumeStatus(ctx, vol.ID, hosting.VolumeAvailable); err != nil {
			return err
		}
		vol.Status = hosting.VolumeAvailable
		if err := s.emitVolume(ctx, tx, hosting.EventVolumeUpdated, vol, "status"); err != nil {
			return err
		}
		if op.ServerID == 0 {
			return nil
		}
		return s.VolumeAttached(op)(ctx, tx)
	}
}

// VolumeAttached: the volume is attached to the operation's server.
func (s *Service) VolumeAttached(op hosting.Operation) Change {
	return func(ctx context.Context, tx store.Tx) error {
		vol, err := s.opVolume(ctx, tx, op)
		if err != nil {
			return err
		}
		id := op.ServerID
		if err := tx.SetVolumeServer(ctx, vol.ID, &id); err != nil {
			return err
		}
		vol.ServerID = &id
		return s.emitVolume(ctx, tx, hosting.EventVolumeAttached, vol)
	}
}

// VolumeDetached: the volume is attached to no server.
func (s *Service) VolumeDetached(op hosting.Operation) Change {
	return func(ctx context.Context, tx store.Tx) error {
		vol, err := s.opVolume(ctx, tx, op)
		if err != nil {
			return err
		}
		return s.detached(ctx, tx, vol)
	}
}

func (s *Service) detached(ctx context.Context, tx store.Tx, vol hosting.Volume) error {
	if err := tx.SetVolumeServer(ctx, vol.ID, nil); err != nil {
		return err
	}
	return s.emitVolume(ctx, tx, hosting.EventVolumeDetached, vol) // ServerID: the server it left
}

// VolumeResized: the volume has the operation's size, billed from its next hour.
func (s *Service) VolumeResized(op hosting.Operation) Change {
	return func(ctx context.Context, tx store.Tx) error {
		vol, err := s.opVolume(ctx, tx, op)
		if err != nil {
			return err
		}
		if err := tx.SetVolumeSize(ctx, vol.ID, op.SizeGB); err != nil {
			return err
		}
		vol.SizeGB = op.SizeGB
		loc, err := tx.Location(ctx, vol.LocationID)
		if err != nil {
			return err
		}
		rate, cap := volumeRate(vol.SizeGB, loc)
		if err := tx.SetMeterRate(ctx, hosting.ResourceVolume, vol.ID, rate, cap); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		return s.emitVolume(ctx, tx, hosting.EventVolumeResized, vol)
	}
}

// volumeFailed is what a volume's operation that cannot succeed leaves: a volume
// that could not be made is in error, refunded and no longer billed; an attachment,
// a detachment or a growth that failed leaves the volume as it was.
func (s *Service) volumeFailed(ctx context.Context, tx store.Tx, op hosting.Operation) error {
	if op.Type != hosting.OpCreateVolume {
		return nil
	}
	vol, err := s.opVolume(ctx, tx, op)
	if err != nil {
		return err
	}
	if err := tx.SetVolumeStatus(ctx, vol.ID, hosting.VolumeError); err != nil {
		return err
	}
	vol.Status = hosting.VolumeError
	if err := s.refundVolume(ctx, tx, vol); err != nil {
		return err
	}
	return s.emitVolume(ctx, tx, hosting.EventVolumeUpdated, vol, "status")
}

// refundVolume gives back what a volume that was never made was charged.
func (s *Service) refundVolume(ctx context.Context, tx store.Tx, vol hosting.Volume) error {
	if err := tx.StopMeter(ctx, hosting.ResourceVolume, vol.ID, vol.CreatedAt); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	charged, err := tx.Charged(ctx, hosting.ResourceVolume, vol.ID)
	if err != nil || charged <= 0 {
		return err
	}
	start := vol.CreatedAt
	t, err := tx.AddTransaction(ctx, hosting.Transaction{AccountID: vol.AccountID, Type: hosting.TxRefund, Amount: charged,
		ResourceType: hosting.ResourceVolume, ResourceID: &vol.ID, ResourceName: vol.Name, PeriodStart: &start,
		CreatedAt: s.NowFor(vol.AccountID)})
	if err != nil {
		return err
	}
	return s.afterCredit(ctx, tx, t)
}

// opVolume reads the volume a volume's operation is about.
func (s *Service) opVolume(ctx context.Context, tx store.Tx, op hosting.Operation) (hosting.Volume, error) {
	if op.VolumeID == nil {
		return hosting.Volume{}, errors.New(string(op.Type) + " without a volume")
	}
	return tx.VolumeAny(ctx, *op.VolumeID)
}

// IsVolumeOp reports whether t is one of a volume's operations.
func IsVolumeOp(t hosting.OpType) bool { return strings.HasSuffix(string(t), "_volume") }

// VolumeDeleteArgs is the job that removes a deleted volume's data from the driver.
type VolumeDeleteArgs struct {
	VolumeID int64 `json:"volume_id"`
}

// Kind implements river.JobArgs.
func (VolumeDeleteArgs) Kind() string { return "berth.volume_delete" }
