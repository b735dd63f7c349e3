package httpapi

import (
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store"
)

func (s *Server) openAPI(r *request) (int, any, error) { return http.StatusOK, s.openapi, nil }

func (s *Server) me(r *request) (int, any, error) {
	a, t := r.p.Account, r.p.Token
	scopes := make([]string, len(t.Scopes))
	for i, sc := range t.Scopes {
		scopes[i] = string(sc)
	}
	return http.StatusOK, one(api.Me{ID: a.ID, Email: a.Email, Name: a.Name, Language: a.Language, Currency: a.Currency,
		Credit: a.Credit.String(), Blocked: a.Blocked, Scopes: scopes,
		Token: api.TokenInfo{ID: t.ID, Name: t.Name, ExpiresAt: t.ExpiresAt}}), nil
}

func (s *Server) locations(r *request) (int, any, error) {
	ls, err := s.svc.Catalog.Locations(r.ctx)
	return http.StatusOK, list(ls, toLocation), err
}

func (s *Server) apps(r *request) (int, any, error) {
	as, err := s.svc.Catalog.Apps(r.ctx)
	return http.StatusOK, list(as, func(a hosting.App) api.App {
		return api.App{ID: a.ID, Name: a.Name, Description: a.Description, Version: a.Version}
	}), err
}

// ---- servers ----

func (s *Server) listServers(r *request) (int, any, error) {
	var f store.ServerFilter
	var v hosting.Validation
	if raw, ok := queryValue(r.Request, "project_id", &v); ok {
		if id, err := hosting.ParseID(raw); err != nil {
			v.Add("project_id", "validation.positive_integer")
		} else {
			f.ProjectID = &id
		}
	}
	if raw, ok := queryValue(r.Request, "status", &v); ok {
		st := hosting.Status(raw)
		if !slices.Contains(hosting.Statuses, st) {
			vals := ""
			for i, x := range hosting.Statuses {
				if i > 0 {
					vals += ", "
				}
				vals += string(x)
			}
			v.Add("status", "validation.one_of", "values", vals)
		}
		f.Status = &st
	}
	if err := v.Err("project_id", "status"); err != nil {
		return 0, nil, err
	}
	list_, err := s.svc.Servers.Servers(r.ctx, r.p, f)
	return http.StatusOK, list(list_, toServer), err
}

func (s *Server) serverRef(r *request) (hosting.ServerRef, error) {
	ref, ok := hosting.ParseServerRef(r.PathValue("id"))
	if !ok {
		return ref, hosting.ErrNotFound()
	}
	return ref, nil
}

func (s *Server) getServer(r *request) (int, any, error) {
	ref, err := s.serverRef(r)
	if err != nil {
		return 0, nil, err
	}
	srv, err := s.svc.Servers.Server(r.ctx, r.p, ref)
	return http.StatusOK, one(toServer(srv)), err
}

func (s *Server) orderServer(r *request) (int, any, error) {
	var b api.ServerCreate
	if err := decode(r.Request, &b); err != nil {
		return 0, nil, err
	}
	o := ops.Order{PlanID: b.PlanID, LocationID: b.LocationID, ImageID: b.ImageID, SSHKeyIDs: b.SSHKeyIDs,
		DisplayName: b.DisplayName, AppID: b.AppID, RecipeID: b.RecipeID, RootPassword: b.RootPassword,
		VolumeIDs: b.VolumeIDs, Automount: b.Automount, LicenseIDs: b.LicenseIDs}
	// A license in an order needs the scope licenses too (docs/api.md, Licenses).
	if len(b.LicenseIDs) > 0 && len(r.p.Token.Scopes.Missing(hosting.ScopeLicenses)) > 0 {
		return 0, nil, missingScope(hosting.ScopeLicenses, nil)
	}
	if b.ProjectID.Set && !b.ProjectID.Null {
		o.ProjectID = &b.ProjectID.Value
	}
	srv, err := s.svc.Servers.OrderServer(r.ctx, r.p, o)
	return http.StatusCreated, one(toServer(srv)), err
}

// writable resolves {id} to a server the principal may change (404, then 403 for a
// suspended server), before the body is read.
func (s *Server) writable(r *request) (hosting.Server, error) {
	ref, err := s.serverRef(r)
	if err != nil {
		return hosting.Server{}, err
	}
	return s.svc.Servers.WritableServer(r.ctx, r.p, ref)
}

func (s *Server) patchServer(r *request) (int, any, error) {
	srv, err := s.writable(r)
	if err != nil {
		return 0, nil, err
	}
	var b api.ServerUpdate
	if err := decode(r.Request, &b); err != nil {
		return 0, nil, err
	}
	u := ops.ServerUpdate{DisplayName: b.DisplayName, ClearProject: b.ProjectID.Set && b.ProjectID.Null}
	if b.ProjectID.Set && !b.ProjectID.Null {
		u.ProjectID = &b.ProjectID.Value
	}
	srv, err = s.svc.Servers.UpdateServer(r.ctx, r.p, srv.ID, u)
	return http.StatusOK, one(toServer(srv)), err
}

func (s *Server) deleteServer(r *request) (int, any, error) {
	srv, err := s.writable(r)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, s.svc.Servers.DeleteServer(r.ctx, r.p, srv.ID)
}

func (s *Server) power(r *request) (int, any, error) {
	srv, err := s.writable(r)
	if err != nil {
		return 0, nil, err
	}
	var b api.PowerRequest
	if err := decode(r.Request, &b); err != nil {
		return 0, nil, err
	}
	action, err := ops.ParsePowerAction(b.Action)
	if err != nil {
		return 0, nil, err
	}
	srv, err = s.svc.Servers.Power(r.ctx, r.p, srv.ID, action)
	return http.StatusOK, one(toServer(srv)), err
}

// ---- ssh keys ----

func (s *Server) listSSHKeys(r *request) (int, any, error) {
	ks, err := s.svc.SSHKeys.SSHKeys(r.ctx, r.p)
	return http.StatusOK, list(ks, toSSHKey), err
}

func (s *Server) createSSHKey(r *request) (int, any, error) {
	var b api.SSHKeyCreate
	if err := decode(r.Request, &b); err != nil {
		return 0, nil, err
	}
	k, err := s.svc.SSHKeys.CreateSSHKey(r.ctx, r.p, b.Name, b.PublicKey)
	return http.StatusCreated, one(toSSHKey(k)), err
}

func (s *Server) deleteSSHKey(r *request) (int, any, error) {
	id, err := pathID(r.Request)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, s.svc.SSHKeys.DeleteSSHKey(r.ctx, r.p, id)
}

// ---- projects ----

func (s *Server) listProjects(r *request) (int, any, error) {
	ps, err := s.svc.Projects.Projects(r.ctx, r.p)
	return http.StatusOK, list(ps, toProject), err
}

func (s *Server) createProject(r *request) (int, any, error) {
	var b api.ProjectWrite
	if err := decode(r.Request, &b); err != nil {
		return 0, nil, err
	}
	p, err := s.svc.Projects.CreateProject(r.ctx, r.p, b.Name)
	return http.StatusCreated, one(toProject(p)), err
}

func (s *Server) renameProject(r *request) (int, any, error) {
	id, err := pathID(r.Request)
	if err != nil {
		return 0, nil, err
	}
	if _, err := s.svc.Projects.Project(r.ctx, r.p, id); err != nil {
		return 0, nil, err // 404 before 422
	}
	var b api.ProjectWrite
	if err := decode(r.Request, &b); err != nil {
		return 0, nil, err
	}
	p, err := s.svc.Projects.RenameProject(r.ctx, r.p, id, b.Name)
	return http.StatusOK, one(toProject(p)), err
}

func (s *Server) deleteProject(r *request) (int, any, error) {
	id, err := pathID(r.Request)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, s.svc.Projects.DeleteProject(r.ctx, r.p, id)
}

// ---- recipes ----

// recipePage is how many recipes a list reads at a time: at most 1 MiB of scripts.
const recipePage = 16

// listRecipes streams the list (up to the recipe quota × 64 KiB of scripts) a page at
// a time, never holding it whole. The first page is read before the answer starts, so
// that a failure there is a clean error.
func (s *Server) listRecipes(r *request) (int, any, error) {
	first, err := s.svc.Recipes.RecipesAfter(r.ctx, r.p, 0, recipePage)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, streamList(first, recipePage, toRecipe, func(last hosting.Recipe) ([]hosting.Recipe, error) {
		return s.svc.Recipes.RecipesAfter(r.ctx, r.p, last.ID, recipePage)
	}), nil
}

func (s *Server) getRecipe(r *request) (int, any, error) {
	id, err := pathID(r.Request)
	if err != nil {
		return 0, nil, err
	}
	rc, err := s.svc.Recipes.Recipe(r.ctx, r.p, id)
	return http.StatusOK, one(toRecipe(rc)), err
}

func (s *Server) createRecipe(r *request) (int, any, error) {
	var b api.RecipeWrite
	if err := decodeMax(r.Request, &b, MaxRecipeBody); err != nil {
		return 0, nil, err
	}
	rc, err := s.svc.Recipes.CreateRecipe(r.ctx, r.p, b.Name, b.Script)
	return http.StatusCreated, one(toRecipe(rc)), err
}

func (s *Server) updateRecipe(r *request) (int, any, error) {
	id, err := pathID(r.Request)
	if err != nil {
		return 0, nil, err
	}
	if _, err := s.svc.Recipes.Recipe(r.ctx, r.p, id); err != nil {
		return 0, nil, err // 404 before 422
	}
	var b api.RecipeWrite
	if err := decodeMax(r.Request, &b, MaxRecipeBody); err != nil {
		return 0, nil, err
	}
	rc, err := s.svc.Recipes.UpdateRecipe(r.ctx, r.p, id, b.Name, b.Script)
	return http.StatusOK, one(toRecipe(rc)), err
}

func (s *Server) deleteRecipe(r *request) (int, any, error) {
	id, err := pathID(r.Request)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, s.svc.Recipes.DeleteRecipe(r.ctx, r.p, id)
}

// ---- operations ----

func (s *Server) getOperation(r *request) (int, any, error) {
	id, err := pathID(r.Request)
	if err != nil {
		return 0, nil, err
	}
	var wait time.Duration
	var v hosting.Validation
	if raw, ok := queryValue(r.Request, "wait", &v); ok {
		if n, err := strconv.Atoi(raw); err != nil || n < 1 || n > 60 {
			v.Add("wait", "validation.wait_range")
		} else {
			wait = time.Duration(n) * time.Second
		}
	}
	if err := v.Err(); err != nil {
		if _, err := s.svc.Operations.Operation(r.ctx, r.p, id, 0); err != nil {
			return 0, nil, err // 404 before 422
		}
		return 0, nil, err
	}
	op, err := s.svc.Operations.Operation(r.ctx, r.p, id, wait)
	return http.StatusOK, one(toOperation(op)), err
}
