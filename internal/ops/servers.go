package ops

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/riverqueue/river"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// OperationArgs is the one job kind: carry out operation OperationID. Its kind string
// is stable: renaming it strands queued jobs.
type OperationArgs struct {
	OperationID int64 `json:"operation_id"`
}

// Kind implements river.JobArgs.
func (OperationArgs) Kind() string { return "berth.operation" }

// InsertOpts: a job keeps retrying transient failures (a hypervisor away) for long.
func (OperationArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 50}
}

// startOperation marks srv busy with a new operation and enqueues its job, in tx.
// A server already busy answers CodeBusy naming what holds it.
func (s *Service) startOperation(ctx context.Context, tx store.Tx, srv hosting.Server, typ hosting.OpType, action hosting.PowerAction) (hosting.Operation, error) {
	return s.startOp(ctx, tx, srv, hosting.Operation{Type: typ, Action: action})
}

// startOp is startOperation for an operation with parameters (snapshot, image, plan).
func (s *Service) startOp(ctx context.Context, tx store.Tx, srv hosting.Server, op hosting.Operation) (hosting.Operation, error) {
	if srv.Operation != nil {
		return hosting.Operation{}, busy(srv.Operation)
	}
	if s.reach != nil && op.Type != hosting.OpDelete && !srv.Suspended && s.reach.Unreachable(ctx, srv.Name) {
		e := hosting.Errorf(hosting.CodeUnavailable, "error.unavailable")
		e.RetryAfter = 30
		return hosting.Operation{}, e
	}
	op.AccountID, op.ServerID, op.Status, op.StartedAt = srv.AccountID, srv.ID, hosting.OpRunning, s.NowFor(srv.AccountID)
	id, err := tx.StartOperation(ctx, op)
	if errors.Is(err, store.ErrConflict) {
		cur, err2 := tx.ServerAny(ctx, srv.ID)
		if err2 == nil && cur.Operation != nil {
			return op, busy(cur.Operation)
		}
		return op, changedMeanwhile()
	}
	if err != nil {
		return op, internal("start operation", err)
	}
	// The caller decided on srv as its transaction read it. On PostgreSQL (READ
	// COMMITTED) other transactions may have committed since — an operation that
	// started and has ended by now, a suspension, a deletion — and the write above,
	// which asks only that the server be free, went through. It holds the server's row
	// now: read it again, and start nothing decided on what the server no longer is
	// (a memory snapshot of a machine that stopped meanwhile would fail at every
	// attempt and never end). On SQLite write transactions run one at a time, and
	// nothing has changed.
	cur, err := tx.ServerAny(ctx, srv.ID)
	if err != nil {
		return op, internal("server", err)
	}
	if changed(srv, cur) {
		return op, changedMeanwhile()
	}
	op.ID = id
	if err := s.enqueue(ctx, tx, OperationArgs{OperationID: id}); err != nil {
		return op, internal("enqueue", err)
	}
	return op, nil
}

// changed reports whether what an operation is decided on differs between two reads
// of a server.
func changed(was, now hosting.Server) bool {
	return was.Status != now.Status || was.Suspended != now.Suspended || (was.DeletedAt == nil) != (now.DeletedAt == nil) ||
		was.PlanID != now.PlanID || was.ImageID != now.ImageID || was.DiskGB != now.DiskGB
}

// changedMeanwhile is CodeBusy for a server that another operation held, or another
// write changed, while a request was being decided: asked again, the request is
// decided on the server as it is then.
func changedMeanwhile() error {
	e := hosting.Errorf(hosting.CodeBusy, "error.server_changed")
	e.RetryAfter = 1
	return e
}

func busy(op *hosting.Operation) error {
	e := hosting.Errorf(hosting.CodeBusy, "error.busy", "operation", string(op.Type))
	e.Operation, e.RetryAfter = op, 5
	return e
}

// Servers lists the principal's servers.
func (s *Service) Servers(ctx context.Context, p hosting.Principal, f store.ServerFilter) ([]hosting.Server, error) {
	list, err := s.store.Servers(ctx, p.Account.ID, f)
	return list, internal("servers", err)
}

// Server finds one server of the principal's account; CodeNotFound otherwise.
func (s *Service) Server(ctx context.Context, p hosting.Principal, ref hosting.ServerRef) (hosting.Server, error) {
	return s.server(ctx, s.store, p, ref)
}

func (s *Service) server(ctx context.Context, r store.Reader, p hosting.Principal, ref hosting.ServerRef) (hosting.Server, error) {
	srv, err := r.Server(ctx, p.Account.ID, ref)
	if errors.Is(err, store.ErrNotFound) {
		return srv, hosting.ErrNotFound()
	}
	return srv, internal("server", err)
}

// WritableServer finds a server the principal may change: CodeNotFound, or
// CodeServerSuspended when it is suspended. Handlers call it before decoding a body,
// so that 404 and 403 come before 422 (API-DECISIONS §2).
func (s *Service) WritableServer(ctx context.Context, p hosting.Principal, ref hosting.ServerRef) (hosting.Server, error) {
	srv, err := s.Server(ctx, p, ref)
	if err != nil {
		return srv, err
	}
	return srv, refuseSuspended(srv)
}

// refuseSuspended is CodeServerSuspended for a suspended server: it may be read, not
// changed.
func refuseSuspended(srv hosting.Server) error {
	if srv.Suspended {
		return hosting.Errorf(hosting.CodeServerSuspended, "error.server_suspended")
	}
	return nil
}

// Order is what POST /servers asks for. Nil pointers are fields left out.
type Order struct {
	PlanID       *int64
	LocationID   *int64
	ImageID      *int64
	SSHKeyIDs    []int64
	DisplayName  *string
	ProjectID    *int64
	AppID        *int64
	RecipeID     *int64
	RootPassword *string
}

// orderFields is the order of the request schema, which orders the errors.
var orderFields = []string{"plan_id", "location_id", "image_id", "ssh_key_ids", "display_name", "project_id", "app_id", "recipe_id", "root_password"}

// OrderServer checks an order, writes the server in status provisioning and enqueues
// its provisioning. Every failed rule is a CodeValidationFailed on its field.
func (s *Service) OrderServer(ctx context.Context, p hosting.Principal, o Order) (hosting.Server, error) {
	return s.createServer(ctx, p, o, hosting.StatusProvisioning, func(tx store.Tx, srv *hosting.Server) error {
		op, err := s.startOperation(ctx, tx, *srv, hosting.OpProvision, "")
		if err != nil {
			return err
		}
		srv.Operation = &op
		return nil
	})
}

// createServer checks an order and writes its server in status, billed from now (its
// first hour charged), then has then finish it in the same transaction: an order
// enqueues its provisioning, a sandbox's seed makes its machine at once. Every failed
// rule is a CodeValidationFailed on its field (CodeInsufficientCredit for the credit).
func (s *Service) createServer(ctx context.Context, p hosting.Principal, o Order, status hosting.Status,
	then func(tx store.Tx, srv *hosting.Server) error) (hosting.Server, error) {
	var v hosting.Validation
	if o.DisplayName != nil {
		hosting.CheckLabel(&v, "display_name", *o.DisplayName)
	}
	var passHash string
	if o.RootPassword != nil {
		hosting.CheckRootPassword(&v, "root_password", *o.RootPassword)
		if !v.Has("root_password") {
			h, err := hashRootPassword(*o.RootPassword)
			if err != nil {
				return hosting.Server{}, internal("hash password", err)
			}
			passHash = h
		}
	}
	var srv hosting.Server
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		acct, err := tx.Account(ctx, p.Account.ID)
		if err != nil {
			return internal("account", err)
		}
		var plan hosting.Plan
		var loc hosting.Location
		if o.PlanID == nil {
			v.Add("plan_id", "validation.required")
		} else if plan, err = tx.Plan(ctx, *o.PlanID); errors.Is(err, store.ErrNotFound) {
			v.Add("plan_id", "validation.plan_unknown")
		} else if err != nil {
			return internal("plan", err)
		}
		if o.LocationID == nil {
			v.Add("location_id", "validation.required")
		} else if loc, err = tx.Location(ctx, *o.LocationID); errors.Is(err, store.ErrNotFound) {
			v.Add("location_id", "validation.location_unknown")
		} else if err != nil {
			return internal("location", err)
		}
		haveLoc := loc.ID != 0
		if plan.ID != 0 && haveLoc {
			offered := false
			for _, lp := range loc.Plans {
				if lp.ID == plan.ID {
					offered = true
					plan = lp // carries the capacity at this location
				}
			}
			if !offered {
				v.Add("plan_id", "validation.plan_not_offered")
			} else if ok, err := s.inStock(ctx, tx, loc.ID, plan); err != nil {
				return err
			} else if !ok {
				v.Add("plan_id", "validation.plan_out_of_stock")
			}
		}
		// Image or app, exactly one.
		var imageID int64
		var app *hosting.App
		switch {
		case o.ImageID != nil && o.AppID != nil:
			v.Add("image_id", "validation.image_app_both")
		case o.ImageID == nil && o.AppID == nil:
			v.Add("image_id", "validation.image_app_none")
		case o.ImageID != nil:
			if _, err := tx.Image(ctx, *o.ImageID); errors.Is(err, store.ErrNotFound) {
				v.Add("image_id", "validation.image_unknown")
			} else if err != nil {
				return internal("image", err)
			} else if haveLoc && !offersImage(loc, *o.ImageID) {
				v.Add("image_id", "validation.image_not_offered")
			} else {
				imageID = *o.ImageID
			}
		default:
			a, err := tx.App(ctx, *o.AppID)
			if errors.Is(err, store.ErrNotFound) {
				v.Add("app_id", "validation.app_unknown")
			} else if err != nil {
				return internal("app", err)
			} else {
				app = &a
				if haveLoc {
					for _, img := range loc.Images {
						if img.IsUbuntu() && imageID == 0 {
							imageID = img.ID
						}
					}
					if imageID == 0 {
						v.Add("app_id", "validation.app_no_ubuntu")
					}
				}
			}
		}
		var keys []hosting.SSHKey
		seen := map[int64]bool{}
		for _, id := range o.SSHKeyIDs {
			if seen[id] {
				v.Add("ssh_key_ids", "validation.ssh_key_repeated", "id", id)
				continue
			}
			seen[id] = true
			k, err := tx.SSHKey(ctx, acct.ID, id)
			if errors.Is(err, store.ErrNotFound) {
				v.Add("ssh_key_ids", "validation.ssh_key_unknown", "id", id)
			} else if err != nil {
				return internal("ssh key", err)
			} else {
				keys = append(keys, k)
			}
		}
		if o.ProjectID != nil {
			if _, err := tx.Project(ctx, acct.ID, *o.ProjectID); errors.Is(err, store.ErrNotFound) {
				v.Add("project_id", "validation.project_unknown")
			} else if err != nil {
				return internal("project", err)
			}
		}
		if o.RecipeID != nil {
			if _, err := tx.Recipe(ctx, acct.ID, *o.RecipeID); errors.Is(err, store.ErrNotFound) {
				v.Add("recipe_id", "validation.recipe_unknown")
			} else if err != nil {
				return internal("recipe", err)
			}
		}
		if plan.ID != 0 && !v.Has("plan_id") && acct.Credit < plan.PriceHourly {
			v.Add("plan_id", "validation.credit_too_low", "amount", plan.PriceHourly.String(), "currency", acct.Currency)
			v.SetCode(hosting.CodeInsufficientCredit)
		}
		if err := s.checkQuota(ctx, tx, acct.ID, hosting.QuotaServers, &v); err != nil {
			return err
		}
		if err := v.Err(orderFields...); err != nil {
			return err
		}

		srv = hosting.Server{
			AccountID: acct.ID, Name: hosting.NewServerName(), ProjectID: o.ProjectID, Status: status,
			LocationID: loc.ID, PlanID: plan.ID, ImageID: imageID, RecipeID: o.RecipeID,
			VCPUs: plan.VCPUs, MemoryMB: plan.MemoryMB, DiskGB: plan.DiskGB, RootPassHash: passHash, Keys: keys,
			CreatedAt: s.NowFor(acct.ID),
		}
		if app != nil {
			srv.AppID = &app.ID
		}
		srv.DisplayName = srv.Name
		if o.DisplayName != nil {
			srv.DisplayName = strings.TrimSpace(*o.DisplayName)
		}
		// Names are unique forever; on the rare collision, draw again.
		for attempt := 0; ; attempt++ {
			srv.ID, err = tx.CreateServer(ctx, srv)
			if !errors.Is(err, store.ErrConflict) || attempt == 5 {
				break
			}
			srv.Name = hosting.NewServerName()
			if o.DisplayName == nil {
				srv.DisplayName = srv.Name
			}
		}
		if err != nil {
			return internal("create server", err)
		}
		if err := s.openServerMeter(ctx, tx, acct, srv, plan); err != nil {
			return err
		}
		srv.SSHKeyIDs = make([]int64, len(keys))
		for i, k := range keys {
			srv.SSHKeyIDs[i] = k.ID
		}
		return then(tx, &srv)
	})
	return srv, err
}

func offersImage(l hosting.Location, id int64) bool {
	for _, i := range l.Images {
		if i.ID == id {
			return true
		}
	}
	return false
}

// ServerUpdate is what PATCH /servers/{id} changes: nil leaves a field alone;
// ClearProject unassigns the server.
type ServerUpdate struct {
	DisplayName  *string
	ProjectID    *int64
	ClearProject bool
}

// UpdateServer renames a server or moves it between projects. It is allowed while
// the server is busy.
func (s *Service) UpdateServer(ctx context.Context, p hosting.Principal, id int64, u ServerUpdate) (hosting.Server, error) {
	var v hosting.Validation
	if u.DisplayName != nil {
		hosting.CheckLabel(&v, "display_name", *u.DisplayName)
	}
	var srv hosting.Server
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		if srv, err = s.writable(ctx, tx, p, id); err != nil {
			return err
		}
		if u.ProjectID != nil {
			if _, err := tx.Project(ctx, p.Account.ID, *u.ProjectID); errors.Is(err, store.ErrNotFound) {
				v.Add("project_id", "validation.project_unknown")
			} else if err != nil {
				return internal("project", err)
			}
		}
		if err := v.Err("display_name", "project_id"); err != nil {
			return err
		}
		if u.DisplayName != nil {
			srv.DisplayName = strings.TrimSpace(*u.DisplayName)
		}
		if u.ClearProject {
			srv.ProjectID = nil
		} else if u.ProjectID != nil {
			srv.ProjectID = u.ProjectID
		}
		return internal("update server", tx.UpdateServer(ctx, srv))
	})
	return srv, err
}

// DeleteServer removes a server at once from the account's view and destroys its
// machine in the background, exactly once. A busy server answers CodeBusy.
func (s *Service) DeleteServer(ctx context.Context, p hosting.Principal, id int64) error {
	return s.store.InTx(ctx, func(tx store.Tx) error {
		srv, err := s.writable(ctx, tx, p, id)
		if err != nil {
			return err
		}
		if _, err := s.startOperation(ctx, tx, srv, hosting.OpDelete, ""); err != nil {
			return err
		}
		// Its snapshots go with it; destroying the machine removes their data.
		snaps, err := tx.Snapshots(ctx, srv.ID)
		if err != nil {
			return internal("snapshots", err)
		}
		for _, snap := range snaps {
			if err := tx.DeleteSnapshot(ctx, snap.ID, s.NowFor(srv.AccountID)); err != nil {
				return internal("delete snapshot", err)
			}
		}
		if err := s.stopServerMeters(ctx, tx, srv, snaps); err != nil {
			return err
		}
		return internal("delete server", tx.DeleteServer(ctx, srv.ID, s.NowFor(srv.AccountID)))
	})
}

// ParsePowerAction checks the action of a power request.
func ParsePowerAction(a *string) (hosting.PowerAction, error) {
	if a == nil {
		return "", hosting.Invalid("action", "validation.required")
	}
	for _, pa := range hosting.PowerActions {
		if string(pa) == *a {
			return pa, nil
		}
	}
	vals := make([]string, len(hosting.PowerActions))
	for i, pa := range hosting.PowerActions {
		vals[i] = string(pa)
	}
	return "", hosting.Invalid("action", "validation.one_of", "values", strings.Join(vals, ", "))
}

// Power starts a power action. It answers the server in its transient status;
// CodeBusy while another operation runs; a validation error on action when the
// action does not fit the server's status.
func (s *Service) Power(ctx context.Context, p hosting.Principal, id int64, action hosting.PowerAction) (hosting.Server, error) {
	var srv hosting.Server
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		if srv, err = s.writable(ctx, tx, p, id); err != nil {
			return err
		}
		if srv.Operation != nil {
			return busy(srv.Operation)
		}
		to, ok := action.Transition(srv.Status)
		if !ok {
			return hosting.Invalid("action", "validation.action_state", "action", string(action), "status", string(srv.Status))
		}
		op, err := s.startOperation(ctx, tx, srv, hosting.OpPower, action)
		if err != nil {
			return err
		}
		srv.Operation, srv.Status = &op, to
		return internal("set status", tx.SetServerStatus(ctx, srv.ID, to))
	})
	return srv, err
}

// describe is for logs.
func describe(op hosting.Operation) string {
	if op.Action != "" {
		return fmt.Sprintf("%s(%s)#%d", op.Type, op.Action, op.ID)
	}
	return fmt.Sprintf("%s#%d", op.Type, op.ID)
}
