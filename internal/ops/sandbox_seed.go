package ops

import (
	"context"
	"strings"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// SeedRequest is what POST /sandbox/v1/seed asks for (API-DECISIONS §11): records to
// make at once, by kind. Nil pointers are fields left out.
type SeedRequest struct {
	SSHKeys  []SeedSSHKey
	Projects []SeedProject
	Recipes  []SeedRecipe
	Servers  []SeedServer
}

// SeedSSHKey, SeedProject and SeedRecipe are what POST /ssh-keys, /projects and
// /recipes take.
type SeedSSHKey struct{ Name, PublicKey *string }

// SeedProject is a project to seed.
type SeedProject struct{ Name *string }

// SeedRecipe is a recipe to seed.
type SeedRecipe struct{ Name, Script *string }

// SeedServer is a server to seed: an order's plan, location, image and display name,
// the status it is to be in at once, and its project and SSH keys by name (the
// account's, or seeded by the same request).
type SeedServer struct {
	DisplayName                 *string
	PlanID, LocationID, ImageID *int64
	Status                      *string // running (the default) or stopped
	Project                     *string
	SSHKeys                     []string
}

// Seeded is what a seed made, by kind, in the order it was asked for.
type Seeded struct {
	SSHKeys  []hosting.SSHKey
	Projects []hosting.Project
	Recipes  []hosting.Recipe
	Servers  []hosting.Server
}

// SeedMaxItems is the most items of one kind a seed takes.
const SeedMaxItems = 100

// The fields of a seed and of its items, in the order of their schemas: the order of
// a 422's messages.
var (
	seedFields       = []string{"ssh_keys", "projects", "recipes", "servers"}
	seedSSHKeyFields = []string{"name", "public_key", hosting.QuotaSSHKeys.Field}
	seedProjFields   = []string{"name", hosting.QuotaProjects.Field}
	seedRecipeFields = []string{"name", "script", hosting.QuotaRecipes.Field}
	seedServerFields = []string{"display_name", "plan_id", "location_id", "image_id", "status", "project", "ssh_keys",
		hosting.QuotaServers.Field}
)

// seedServerNames are an order's fields as a seeded server names them.
var seedServerNames = map[string]string{"project_id": "project", "ssh_key_ids": "ssh_keys"}

// Seed makes the records of r in the principal's account at once (POST
// /sandbox/v1/seed), all or nothing: SSH keys, projects and recipes through the real
// create calls, servers through the real order's checks and billing (the first hour
// is charged; the credit must cover it), but without provisioning: each server is in
// its status (running or stopped) at once, with its machine and addresses. A server
// names its project and SSH keys by name, the account's or seeded by r. Every failed
// rule is a validation error on its item's field, "servers[0].plan_id" (the code
// insufficient_credit when the credit is short), reported together; nothing is made
// then.
func (s *Service) Seed(ctx context.Context, p hosting.Principal, r SeedRequest) (Seeded, error) {
	var v hosting.Validation
	for i, n := range []int{len(r.SSHKeys), len(r.Projects), len(r.Recipes), len(r.Servers)} {
		if n > SeedMaxItems {
			v.Add(seedFields[i], "validation.sandbox_seed_too_many", "max", SeedMaxItems)
		}
	}
	if err := v.Err(seedFields...); err != nil {
		return Seeded{}, err
	}
	if len(r.Servers) > 0 && s.instant == nil {
		return Seeded{}, internal("seed", errNoInstantMachines)
	}
	out := Seeded{SSHKeys: []hosting.SSHKey{}, Projects: []hosting.Project{}, Recipes: []hosting.Recipe{}, Servers: []hosting.Server{}}
	err := s.atomically(ctx, func(ctx context.Context) error {
		// The names servers may refer to: the account's, then the seeded ones.
		keys, projects := map[string][]int64{}, map[string]int64{}
		if err := s.store.InTx(ctx, func(tx store.Tx) error {
			ks, err := tx.SSHKeys(ctx, p.Account.ID)
			if err != nil {
				return internal("ssh keys", err)
			}
			for _, k := range ks {
				keys[k.Name] = append(keys[k.Name], k.ID)
			}
			ps, err := tx.Projects(ctx, p.Account.ID)
			for _, pr := range ps {
				projects[pr.Name] = pr.ID
			}
			return internal("projects", err)
		}); err != nil {
			return err
		}
		// Names of items that failed: a server naming one is not told again.
		failedKeys, failedProjects := map[string]bool{}, map[string]bool{}
		for i, k := range r.SSHKeys {
			key, err := s.CreateSSHKey(ctx, p, k.Name, k.PublicKey)
			if err == nil {
				out.SSHKeys = append(out.SSHKeys, key)
				keys[key.Name] = append(keys[key.Name], key.ID)
			} else if v.AddItem(hosting.Item("ssh_keys", i), err, nil) {
				failedKeys[trimmed(k.Name)] = true
			} else {
				return err
			}
		}
		for i, pr := range r.Projects {
			made, err := s.CreateProject(ctx, p, pr.Name)
			if err == nil {
				out.Projects = append(out.Projects, made)
				projects[made.Name] = made.ID
			} else if v.AddItem(hosting.Item("projects", i), err, nil) {
				failedProjects[trimmed(pr.Name)] = true
			} else {
				return err
			}
		}
		for i, rc := range r.Recipes {
			made, err := s.CreateRecipe(ctx, p, rc.Name, rc.Script)
			if err == nil {
				out.Recipes = append(out.Recipes, made)
			} else if !v.AddItem(hosting.Item("recipes", i), err, nil) {
				return err
			}
		}
		for i, sv := range r.Servers {
			item := hosting.Item("servers", i)
			o, status, refs := serverOrder(sv, keys, projects, failedKeys, failedProjects)
			if err := refs.Err(); err != nil {
				v.AddItem(item, err, nil)
			}
			if sv.ImageID == nil {
				continue // an order would ask for image_id or app_id: a seed has only the first
			}
			srv, err := s.seedServer(ctx, p, o, status)
			if err == nil {
				out.Servers = append(out.Servers, srv)
			} else if !v.AddItem(item, err, seedServerNames) {
				return err
			}
		}
		if err := v.Err(r.errorOrder()...); err != nil {
			return err
		}
		for i := range out.Projects {
			for _, srv := range out.Servers {
				if srv.ProjectID != nil && *srv.ProjectID == out.Projects[i].ID {
					out.Projects[i].ServerCount++
				}
			}
		}
		return nil
	})
	if err != nil {
		return Seeded{}, err
	}
	s.log.Info("sandbox account seeded", "account", p.Account.ID, "ssh_keys", len(out.SSHKeys), "projects", len(out.Projects),
		"recipes", len(out.Recipes), "servers", len(out.Servers))
	return out, nil
}

// serverOrder is the order a seeded server makes and the status it is to be in, with
// what is wrong with its status, project and SSH keys and its image left out (refs).
// keys and projects find the ids of names; a name among failed is an item of the
// same request that failed, told about already.
func serverOrder(sv SeedServer, keys map[string][]int64, projects map[string]int64, failedKeys, failedProjects map[string]bool) (Order, hosting.Status, *hosting.Validation) {
	var v hosting.Validation
	o := Order{PlanID: sv.PlanID, LocationID: sv.LocationID, ImageID: sv.ImageID, DisplayName: sv.DisplayName}
	if sv.ImageID == nil {
		v.Add("image_id", "validation.required")
	}
	status := hosting.StatusRunning
	if sv.Status != nil {
		switch st := hosting.Status(*sv.Status); st {
		case hosting.StatusRunning, hosting.StatusStopped:
			status = st
		default:
			v.Add("status", "validation.one_of", "values", "running, stopped")
		}
	}
	if sv.Project != nil {
		name := strings.TrimSpace(*sv.Project)
		if id, ok := projects[name]; ok {
			o.ProjectID = &id
		} else if !failedProjects[name] {
			v.Add("project", "validation.sandbox_project_unknown", "name", name)
		}
	}
	for _, ref := range sv.SSHKeys {
		name := strings.TrimSpace(ref)
		switch ids := keys[name]; {
		case len(ids) == 1:
			o.SSHKeyIDs = append(o.SSHKeyIDs, ids[0])
		case len(ids) > 1:
			v.Add("ssh_keys", "validation.sandbox_ssh_key_ambiguous", "name", name)
		case !failedKeys[name]:
			v.Add("ssh_keys", "validation.sandbox_ssh_key_unknown", "name", name)
		}
	}
	return o, status, &v
}

// seedServer creates a server as an order does, in status at once: its machine is
// made in the matching state in the same transaction, and its addresses are set.
func (s *Service) seedServer(ctx context.Context, p hosting.Principal, o Order, status hosting.Status) (hosting.Server, error) {
	state := compute.StateRunning
	if status == hosting.StatusStopped {
		state = compute.StateStopped
	}
	return s.createServer(ctx, p, o, status, func(tx store.Tx, srv *hosting.Server) error {
		m, err := s.instant.PlaceTx(ctx, tx.SQL(), machineSpec(*srv), state)
		if err != nil {
			return internal("place machine", err)
		}
		if err := tx.SetServerAddresses(ctx, srv.ID, m.IPv4, m.IPv6); err != nil {
			return internal("addresses", err)
		}
		srv.IPv4, srv.IPv6 = &m.IPv4, &m.IPv6
		return nil
	})
}

// errorOrder lists the places errors of r may be reported at, in the order of the
// schemas: each item (as a whole, then its fields) of each list.
func (r SeedRequest) errorOrder() []string {
	var out []string
	for i, list := range []struct {
		n      int
		fields []string
	}{{len(r.SSHKeys), seedSSHKeyFields}, {len(r.Projects), seedProjFields}, {len(r.Recipes), seedRecipeFields},
		{len(r.Servers), seedServerFields}} {
		for j := range list.n {
			item := hosting.Item(seedFields[i], j)
			out = append(out, item)
			for _, f := range list.fields {
				out = append(out, item+"."+f)
			}
		}
	}
	return out
}

func trimmed(s *string) string {
	if s == nil {
		return ""
	}
	return strings.TrimSpace(*s)
}
