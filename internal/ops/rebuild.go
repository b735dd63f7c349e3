package ops

import (
	"context"
	"errors"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// writable finds a server the principal may change inside tx: 404, then 403 when it
// is suspended (docs/api.md, Errors).
func (s *Service) writable(ctx context.Context, tx store.Tx, p hosting.Principal, id int64) (hosting.Server, error) {
	srv, err := s.server(ctx, tx, p, hosting.ServerRef{ID: id})
	if err != nil {
		return srv, err
	}
	return srv, refuseSuspended(srv)
}

// serverLocation reads the location a server lives in, with what it offers.
func (s *Service) serverLocation(ctx context.Context, r store.Reader, srv hosting.Server) (hosting.Location, error) {
	loc, err := r.Location(ctx, srv.LocationID)
	return loc, internal("location", err)
}

// Reinstall rebuilds a server from imageID: its disk is wiped, the image written
// afresh and the order's SSH keys applied again. The server answers in status
// reinstalling and ends running.
func (s *Service) Reinstall(ctx context.Context, p hosting.Principal, id int64, imageID *int64) (hosting.Server, error) {
	var srv hosting.Server
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		if srv, err = s.writable(ctx, tx, p, id); err != nil {
			return err
		}
		if imageID == nil {
			return hosting.Invalid("image_id", "validation.required")
		}
		loc, err := s.serverLocation(ctx, tx, srv)
		if err != nil {
			return err
		}
		if _, err := tx.Image(ctx, *imageID); errors.Is(err, store.ErrNotFound) {
			return hosting.Invalid("image_id", "validation.image_unknown")
		} else if err != nil {
			return internal("image", err)
		}
		var v hosting.Validation
		if !hosting.CheckImageOffered(&v, loc, *imageID) {
			return v.Err()
		}
		if err := s.checkReinstallLicenses(ctx, tx, srv, *imageID); err != nil {
			return err
		}
		if srv.Operation != nil {
			return busy(srv.Operation)
		}
		switch {
		case srv.Status == hosting.StatusError && srv.IPv4 == nil && srv.IPv6 == nil:
			// Its provisioning failed, and what it made was undone: there is no machine
			// to write the image on (docs/api.md, Failed operations).
			return hosting.Invalid("server", "validation.server_no_machine")
		case srv.Status == hosting.StatusRunning, srv.Status == hosting.StatusStopped, srv.Status == hosting.StatusError:
		default:
			return hosting.Invalid("server", "validation.server_state", "status", string(srv.Status))
		}
		op, err := s.startOp(ctx, tx, srv, hosting.Operation{Type: hosting.OpReinstall, ImageID: imageID})
		if err != nil {
			return err
		}
		srv.Operation, srv.Status = &op, hosting.StatusReinstalling
		return internal("set status", s.setStatus(ctx, tx, srv.ID, srv.Status))
	})
	return srv, err
}

// RescaleOption is a plan a server could move to.
type RescaleOption struct {
	hosting.Plan
	// InStock: the location has room for one more server of the plan.
	InStock bool
	// DiskOK: the plan's disk is at least the server's current disk.
	DiskOK bool
}

// RescaleOptions lists every other plan of the server's location.
func (s *Service) RescaleOptions(ctx context.Context, p hosting.Principal, ref hosting.ServerRef) ([]RescaleOption, error) {
	srv, err := s.server(ctx, s.store, p, ref)
	if err != nil {
		return nil, err
	}
	loc, err := s.serverLocation(ctx, s.store, srv)
	if err != nil {
		return nil, err
	}
	out := []RescaleOption{}
	for _, pl := range loc.Plans {
		if pl.ID == srv.PlanID {
			continue
		}
		ok, err := s.inStock(ctx, s.store, loc.ID, pl)
		if err != nil {
			return nil, err
		}
		out = append(out, RescaleOption{Plan: pl, InStock: ok, DiskOK: pl.DiskGB >= srv.DiskGB})
	}
	return out, nil
}

// Rescale moves a powered-off server to another plan of its location. upgradeDisk
// grows the disk to the plan's (for good); without it the disk stays, so a later
// move back stays possible. The server answers in status rescaling and ends stopped.
func (s *Service) Rescale(ctx context.Context, p hosting.Principal, id int64, planID *int64, upgradeDisk bool) (hosting.Server, error) {
	var srv hosting.Server
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		if srv, err = s.writable(ctx, tx, p, id); err != nil {
			return err
		}
		if planID == nil {
			return hosting.Invalid("plan_id", "validation.required")
		}
		loc, err := s.serverLocation(ctx, tx, srv)
		if err != nil {
			return err
		}
		var plan *hosting.Plan
		for i := range loc.Plans {
			if loc.Plans[i].ID == *planID {
				plan = &loc.Plans[i]
			}
		}
		if plan == nil {
			if _, err := tx.Plan(ctx, *planID); errors.Is(err, store.ErrNotFound) {
				return hosting.Invalid("plan_id", "validation.plan_unknown")
			} else if err != nil {
				return internal("plan", err)
			}
			return hosting.Invalid("plan_id", "validation.plan_not_offered")
		}
		if plan.ID == srv.PlanID {
			return hosting.Invalid("plan_id", "validation.plan_same")
		}
		if srv.Operation != nil {
			return busy(srv.Operation)
		}
		if srv.Status != hosting.StatusStopped {
			return hosting.Invalid("server", "validation.rescale_not_stopped", "status", string(srv.Status))
		}
		if plan.DiskGB < srv.DiskGB {
			return hosting.Invalid("plan_id", "validation.plan_disk_too_small", "disk", srv.DiskGB)
		}
		if ok, err := s.inStock(ctx, tx, loc.ID, *plan); err != nil {
			return err
		} else if !ok {
			return hosting.Invalid("plan_id", "validation.plan_out_of_stock")
		}
		op, err := s.startOp(ctx, tx, srv, hosting.Operation{Type: hosting.OpRescale, PlanID: &plan.ID, UpgradeDisk: upgradeDisk})
		if err != nil {
			return err
		}
		srv.Operation, srv.Status = &op, hosting.StatusRescaling
		return internal("set status", s.setStatus(ctx, tx, srv.ID, srv.Status))
	})
	return srv, err
}
