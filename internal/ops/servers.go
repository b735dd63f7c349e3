package ops

import (
	"context"
	"errors"
	"strings"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

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
	return op, s.emitOperation(ctx, tx, hosting.EventOperationStarted, op, hosting.OpRunning, "")
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
// so that 404 and 403 come before 422 (docs/api.md, Errors).
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
	// VolumeIDs are attached once the server is made (docs/api.md, Volumes);
	// Automount has the guest mount the formatted ones.
	VolumeIDs []int64
	Automount *bool
	// LicenseIDs are license products the server holds from its order, beside those
	// its image requires (docs/api.md, Licenses).
	LicenseIDs []int64
}

// OrderServer checks an order, writes the server in status provisioning and enqueues
// its provisioning. Every failed rule is a CodeValidationFailed on its field.
func (s *Service) OrderServer(ctx context.Context, p hosting.Principal, o Order) (hosting.Server, error) {
	return s.createServer(ctx, p, o, hosting.StatusProvisioning, func(tx store.Tx, srv *hosting.Server) error {
		op, err := s.startOp(ctx, tx, *srv, hosting.Operation{Type: hosting.OpProvision, Automount: deref(o.Automount)})
		if err != nil {
			return err
		}
		srv.Operation = &op
		// The volumes ordered are the provisioning's until it attaches them.
		if err := tx.HoldVolumes(ctx, o.VolumeIDs, op.ID); errors.Is(err, store.ErrConflict) {
			return changedMeanwhile()
		} else if err != nil {
			return internal("hold volumes", err)
		}
		return nil
	})
}

// createServer checks an order and writes its server in status, billed from now (its
// first hour charged), then has then finish it in the same transaction: an order
// enqueues its provisioning, a sandbox's seed makes its machine at once. Every failed
// rule is a CodeValidationFailed on its field (CodeInsufficientCredit for the credit),
// all reported together (hosting.OrderFields orders them).
func (s *Service) createServer(ctx context.Context, p hosting.Principal, o Order, status hosting.Status,
	then func(tx store.Tx, srv *hosting.Server) error) (hosting.Server, error) {
	var v hosting.Validation
	passHash, err := checkOrderFields(&v, o)
	if err != nil {
		return hosting.Server{}, err
	}
	var srv hosting.Server
	err = s.store.InTx(ctx, func(tx store.Tx) error {
		acct, err := tx.Account(ctx, p.Account.ID)
		if err != nil {
			return internal("account", err)
		}
		c, err := s.resolveCatalog(ctx, tx, o, &v)
		if err != nil {
			return err
		}
		keys, err := checkOwnership(ctx, tx, acct.ID, o, &v)
		if err != nil {
			return err
		}
		if err := checkOrderVolumes(ctx, tx, acct.ID, o, c.loc, &v); err != nil {
			return err
		}
		lics, err := s.orderLicenses(ctx, tx, &v, o.LicenseIDs, c.imageID)
		if err != nil {
			return err
		}
		hosting.CheckOrderCredit(&v, acct, c.plan, licensesPrice(lics, c.plan.VCPUs))
		if err := s.checkQuota(ctx, tx, acct.ID, hosting.QuotaServers, &v); err != nil {
			return err
		}
		if err := v.Err(hosting.OrderFields...); err != nil {
			return err
		}
		srv = s.newServer(acct, o, c, keys, status, passHash)
		if srv, err = s.writeServer(ctx, tx, acct, srv, c.plan, o.DisplayName != nil); err != nil {
			return err
		}
		for _, l := range lics {
			if _, err := s.holdLicense(ctx, tx, acct, srv, l, "license_ids"); err != nil {
				return err
			}
		}
		return then(tx, &srv)
	})
	return srv, err
}

// checkOrderFields checks the fields of an order that need no lookup (its display
// name and root password), and returns the root password's hash.
func checkOrderFields(v *hosting.Validation, o Order) (passHash string, err error) {
	if o.DisplayName != nil {
		hosting.CheckLabel(v, "display_name", *o.DisplayName)
	}
	if o.RootPassword == nil {
		return "", nil
	}
	if hosting.CheckRootPassword(v, "root_password", *o.RootPassword); v.Has("root_password") {
		return "", nil
	}
	h, err := hashRootPassword(*o.RootPassword)
	return h, internal("hash password", err)
}

// orderCatalog is what an order names of the catalog.
type orderCatalog struct {
	plan    hosting.Plan // as the location sells it (its capacity there)
	loc     hosting.Location
	imageID int64        // the image ordered, or the one the app installs on
	app     *hosting.App // nil: none ordered
}

// resolveCatalog finds what an order names of the catalog: its plan, its location,
// and its image or its app. What is missing, unknown, not offered at the location or
// out of stock there is recorded on its field.
func (s *Service) resolveCatalog(ctx context.Context, tx store.Tx, o Order, v *hosting.Validation) (orderCatalog, error) {
	var c orderCatalog
	hosting.CheckOrderChoice(v, o.PlanID, o.LocationID, o.ImageID, o.AppID)
	plan, havePlan, err := lookup(ctx, v, "plan_id", "validation.plan_unknown", o.PlanID, tx.Plan)
	if err != nil {
		return c, internal("plan", err)
	}
	loc, haveLoc, err := lookup(ctx, v, "location_id", "validation.location_unknown", o.LocationID, tx.Location)
	if err != nil {
		return c, internal("location", err)
	}
	c.plan, c.loc = plan, loc
	if havePlan && haveLoc {
		if c.plan, err = s.checkStock(ctx, tx, v, loc, plan); err != nil {
			return c, err
		}
	}
	if v.Has("image_id") { // neither or both of image and app: nothing to look up
		return c, nil
	}
	if o.ImageID != nil {
		_, ok, err := lookup(ctx, v, "image_id", "validation.image_unknown", o.ImageID, tx.Image)
		if ok && (!haveLoc || hosting.CheckImageOffered(v, loc, *o.ImageID)) {
			c.imageID = *o.ImageID
		}
		return c, internal("image", err)
	}
	app, ok, err := lookup(ctx, v, "app_id", "validation.app_unknown", o.AppID, tx.App)
	if ok {
		c.app = &app
		if haveLoc {
			c.imageID = hosting.CheckAppImage(v, loc)
		}
	}
	return c, internal("app", err)
}

// checkStock returns plan as loc sells it, recording on plan_id that loc does not
// sell it or has no room left for it.
func (s *Service) checkStock(ctx context.Context, tx store.Tx, v *hosting.Validation, loc hosting.Location, plan hosting.Plan) (hosting.Plan, error) {
	plan, offered := hosting.CheckPlanOffered(v, loc, plan)
	if !offered {
		return plan, nil
	}
	ok, err := s.inStock(ctx, tx, loc.ID, plan)
	if err == nil && !ok {
		v.Add("plan_id", "validation.plan_out_of_stock")
	}
	return plan, err
}

// checkOwnership finds the SSH keys, the project and the recipe an order names: each
// must be the account's, else the failure is recorded on its field. It returns the
// keys.
func checkOwnership(ctx context.Context, tx store.Tx, accountID int64, o Order, v *hosting.Validation) ([]hosting.SSHKey, error) {
	known := map[int64]hosting.SSHKey{}
	looked := map[int64]bool{}
	for _, id := range o.SSHKeyIDs {
		if looked[id] {
			continue
		}
		looked[id] = true
		k, err := tx.SSHKey(ctx, accountID, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			return nil, internal("ssh key", err)
		}
		known[id] = k
	}
	keys := hosting.CheckSSHKeyIDs(v, o.SSHKeyIDs, known)
	_, _, err := lookup(ctx, v, "project_id", "validation.project_unknown", o.ProjectID, accountsOwn(accountID, tx.Project))
	if err != nil {
		return nil, internal("project", err)
	}
	_, _, err = lookup(ctx, v, "recipe_id", "validation.recipe_unknown", o.RecipeID, accountsOwn(accountID, tx.Recipe))
	return keys, internal("recipe", err)
}

// lookup finds the record id names with get (nothing when id is nil: a field left
// out); one that does not exist is recorded on field as msg. ok says it was found.
func lookup[T any](ctx context.Context, v *hosting.Validation, field, msg string, id *int64,
	get func(context.Context, int64) (T, error)) (t T, ok bool, err error) {
	if id == nil {
		return t, false, nil
	}
	t, err = get(ctx, *id)
	if errors.Is(err, store.ErrNotFound) {
		v.Add(field, msg)
		return t, false, nil
	}
	return t, err == nil, err
}

// accountsOwn is a lookup of an account's own records by id.
func accountsOwn[T any](accountID int64, get func(context.Context, int64, int64) (T, error)) func(context.Context, int64) (T, error) {
	return func(ctx context.Context, id int64) (T, error) { return get(ctx, accountID, id) }
}

// newServer is the server an order that passed its checks makes.
func (s *Service) newServer(acct hosting.Account, o Order, c orderCatalog, keys []hosting.SSHKey, status hosting.Status, passHash string) hosting.Server {
	srv := hosting.Server{
		AccountID: acct.ID, Name: hosting.NewServerName(), ProjectID: o.ProjectID, Status: status,
		LocationID: c.loc.ID, PlanID: c.plan.ID, ImageID: c.imageID, RecipeID: o.RecipeID,
		VCPUs: c.plan.VCPUs, MemoryMB: c.plan.MemoryMB, DiskGB: c.plan.DiskGB, RootPassHash: passHash, Keys: keys,
		CreatedAt: s.NowFor(acct.ID),
	}
	if c.app != nil {
		srv.AppID = &c.app.ID
	}
	srv.DisplayName = srv.Name
	if o.DisplayName != nil {
		srv.DisplayName = strings.TrimSpace(*o.DisplayName)
	}
	srv.SSHKeyIDs = make([]int64, len(keys))
	for i, k := range keys {
		srv.SSHKeyIDs[i] = k.ID
	}
	return srv
}

// writeServer writes a new server of plan, billed from now: its meter opens and its
// first hour is charged (CodeInsufficientCredit when the credit no longer covers it).
// Names are unique forever; on the rare collision a name is drawn again, and so is
// the display name unless the order named the server (named).
func (s *Service) writeServer(ctx context.Context, tx store.Tx, acct hosting.Account, srv hosting.Server, plan hosting.Plan,
	named bool) (hosting.Server, error) {
	var err error
	for attempt := 0; ; attempt++ {
		srv.ID, err = tx.CreateServer(ctx, srv)
		if !errors.Is(err, store.ErrConflict) || attempt == 5 {
			break
		}
		srv.Name = hosting.NewServerName()
		if !named {
			srv.DisplayName = srv.Name
		}
	}
	if err != nil {
		return srv, internal("create server", err)
	}
	if err := s.emitServer(ctx, tx, hosting.EventServerCreated, srv); err != nil {
		return srv, err
	}
	return srv, s.openServerMeter(ctx, tx, acct, srv, plan)
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
		was := srv
		if u.DisplayName != nil {
			srv.DisplayName = strings.TrimSpace(*u.DisplayName)
		}
		if u.ClearProject {
			srv.ProjectID = nil
		} else if u.ProjectID != nil {
			srv.ProjectID = u.ProjectID
		}
		if err := tx.UpdateServer(ctx, srv); err != nil {
			return internal("update server", err)
		}
		if changes := serverChanges(was, srv); len(changes) > 0 {
			return s.emitServer(ctx, tx, hosting.EventServerUpdated, srv, changes...)
		}
		return nil
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
		op, err := s.startOperation(ctx, tx, srv, hosting.OpDelete, "")
		if err != nil {
			return err
		}
		// Its volumes stay; they are busy with the deletion until the machine they are
		// attached to is gone (ServerDestroyed), then detached.
		if err := tx.HoldServerVolumes(ctx, srv.ID, op.ID); err != nil {
			return internal("hold volumes", err)
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
			if err := s.emitSnapshot(ctx, tx, hosting.EventSnapshotDeleted, snap, "deleted"); err != nil {
				return err
			}
		}
		if err := s.stopServerMeters(ctx, tx, srv, snaps); err != nil {
			return err
		}
		if err := s.cancelServerLicenses(ctx, tx, srv.ID); err != nil {
			return err
		}
		if err := tx.DeleteServer(ctx, srv.ID, s.NowFor(srv.AccountID)); err != nil {
			return internal("delete server", err)
		}
		if err := s.publishServerDNS(ctx, tx, srv, "", ""); err != nil {
			return err
		}
		return s.emitServer(ctx, tx, hosting.EventServerDeleted, srv)
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
		return internal("set status", s.setStatus(ctx, tx, srv.ID, to))
	})
	return srv, err
}
