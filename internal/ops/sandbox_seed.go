package ops

import (
	"context"
	"strings"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// SeedRequest is what POST /sandbox/v1/seed asks for (docs/api.md, The sandbox): records to
// make at once, by kind. Nil pointers are fields left out.
type SeedRequest struct {
	SSHKeys  []SeedSSHKey
	Projects []SeedProject
	Recipes  []SeedRecipe
	Servers  []SeedServer
	Volumes  []SeedVolume
	Domains  []DomainCreate
}

// SeedSSHKey, SeedProject and SeedRecipe are what POST /ssh-keys, /projects and
// /recipes take.
type SeedSSHKey struct{ Name, PublicKey *string }

// SeedProject is a project to seed.
type SeedProject struct{ Name *string }

// SeedRecipe is a recipe to seed.
type SeedRecipe struct{ Name, Script *string }

// SeedServer is a server to seed: an order's plan, location, image and display name,
// the status it is to be in at once, its project and SSH keys by name (the
// account's, or seeded by the same request), and the license products it holds by id
// (of the catalog, as an order's license_ids; beside those its image requires).
type SeedServer struct {
	DisplayName                 *string
	PlanID, LocationID, ImageID *int64
	Status                      *string // running (the default) or stopped
	Project                     *string
	SSHKeys                     []string
	LicenseIDs                  []int64
}

// Seeded is what a seed made, by kind, in the order it was asked for.
type Seeded struct {
	SSHKeys  []hosting.SSHKey
	Projects []hosting.Project
	Recipes  []hosting.Recipe
	Servers  []hosting.Server
	Volumes  []hosting.Volume
	Domains  []hosting.Domain
}

// SeedMaxItems is the most items of one kind a seed takes.
const SeedMaxItems = 100

// The fields of a seed and of its items, in the order of their schemas: the order of
// a 422's messages.
var (
	seedFields       = []string{"ssh_keys", "projects", "recipes", "servers", "volumes", "domains"}
	seedSSHKeyFields = []string{"name", "public_key", hosting.QuotaSSHKeys.Field}
	seedProjFields   = []string{"name", hosting.QuotaProjects.Field}
	seedRecipeFields = []string{"name", "script", hosting.QuotaRecipes.Field}
	seedServerFields = []string{"display_name", "plan_id", "location_id", "image_id", "status", "project", "ssh_keys",
		"license_ids", hosting.QuotaServers.Field}
	// A volume's count quota is under name, its size quota under size_gb.
	seedVolumeFields = []string{"name", "size_gb", "location_id", "format", "project", "server", "automount"}
	seedDomainFields = []string{"name", "ttl", "zone_file"}
)

// seedServerNames are an order's fields as a seeded server names them.
var seedServerNames = map[string]string{"project_id": "project", "ssh_key_ids": "ssh_keys"}

// Seed makes the records of r in the principal's account at once (POST
// /sandbox/v1/seed), all or nothing: SSH keys, projects and recipes through the real
// create calls, servers through the real order's checks and billing (the first hour
// is charged; the credit must cover it), but without provisioning: each server is in
// its status (running or stopped) at once, with its machine and addresses. Volumes
// likewise through the real creation's checks and billing, available at once, made
// in the driver and attached to their server when they name one (seedVolume). DNS
// zones through the real creation, with the RRsets of their zone file. A
// server names its project and SSH keys by name, a volume its project and server,
// the account's or seeded by r. Every failed rule is a validation error on its item's
// field, "servers[0].plan_id" (the code insufficient_credit when the credit is
// short), reported together; nothing is made then.
func (s *Service) Seed(ctx context.Context, p hosting.Principal, r SeedRequest) (Seeded, error) {
	if err := r.checkSizes(); err != nil {
		return Seeded{}, err
	}
	if len(r.Servers)+len(r.Volumes) > 0 && s.instant == nil {
		return Seeded{}, internal("seed", errNoInstantMachines)
	}
	var sd *seeding
	err := s.atomically(ctx, func(ctx context.Context) error {
		var err error
		if sd, err = s.newSeeding(ctx, p); err != nil {
			return err
		}
		for _, step := range []func(context.Context, SeedRequest) error{sd.sshKeys, sd.projects, sd.recipes, sd.servers, sd.volumes,
			sd.domains} {
			if err := step(ctx, r); err != nil {
				return err
			}
		}
		if err := sd.v.Err(r.errorOrder()...); err != nil {
			return err
		}
		sd.countProjectServers()
		return nil
	})
	if err != nil {
		return Seeded{}, err
	}
	out := sd.out
	s.log.Info("sandbox account seeded", "account", p.Account.ID, "ssh_keys", len(out.SSHKeys), "projects", len(out.Projects),
		"recipes", len(out.Recipes), "servers", len(out.Servers), "volumes", len(out.Volumes), "domains", len(out.Domains))
	return out, nil
}

// checkSizes refuses a seed with more than SeedMaxItems items of a kind.
func (r SeedRequest) checkSizes() error {
	var v hosting.Validation
	for i, n := range []int{len(r.SSHKeys), len(r.Projects), len(r.Recipes), len(r.Servers), len(r.Volumes), len(r.Domains)} {
		if n > SeedMaxItems {
			v.Add(seedFields[i], "validation.sandbox_seed_too_many", "max", SeedMaxItems)
		}
	}
	return v.Err(seedFields...)
}

// seeding is a seed under way: what it made so far, the names its servers and
// volumes may refer to, and what failed.
type seeding struct {
	s   *Service
	p   hosting.Principal
	out Seeded
	v   hosting.Validation
	// The names servers and volumes may refer to: the account's, then the seeded
	// ones (servers by display name).
	keyIDs, serverIDs map[string][]int64
	projectIDs        map[string]int64
	// Names of items that failed: an item naming one is not told again.
	failedKeys, failedProjects, failedServers map[string]bool
}

// newSeeding starts a seed of the principal's account with the names of its SSH keys,
// projects and servers.
func (s *Service) newSeeding(ctx context.Context, p hosting.Principal) (*seeding, error) {
	sd := &seeding{s: s, p: p, keyIDs: map[string][]int64{}, serverIDs: map[string][]int64{}, projectIDs: map[string]int64{},
		failedKeys: map[string]bool{}, failedProjects: map[string]bool{}, failedServers: map[string]bool{},
		out: Seeded{SSHKeys: []hosting.SSHKey{}, Projects: []hosting.Project{}, Recipes: []hosting.Recipe{}, Servers: []hosting.Server{},
			Volumes: []hosting.Volume{}, Domains: []hosting.Domain{}}}
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		srvs, err := tx.Servers(ctx, p.Account.ID, store.ServerFilter{})
		if err != nil {
			return internal("servers", err)
		}
		for _, srv := range srvs {
			sd.serverIDs[srv.DisplayName] = append(sd.serverIDs[srv.DisplayName], srv.ID)
		}
		ks, err := tx.SSHKeys(ctx, p.Account.ID)
		if err != nil {
			return internal("ssh keys", err)
		}
		for _, k := range ks {
			sd.keyIDs[k.Name] = append(sd.keyIDs[k.Name], k.ID)
		}
		ps, err := tx.Projects(ctx, p.Account.ID)
		for _, pr := range ps {
			sd.projectIDs[pr.Name] = pr.ID
		}
		return internal("projects", err)
	})
	return sd, err
}

// sshKeys makes r's SSH keys through the real create call.
func (sd *seeding) sshKeys(ctx context.Context, r SeedRequest) error {
	for i, k := range r.SSHKeys {
		key, err := sd.s.CreateSSHKey(ctx, sd.p, k.Name, k.PublicKey)
		if err == nil {
			sd.out.SSHKeys = append(sd.out.SSHKeys, key)
			sd.keyIDs[key.Name] = append(sd.keyIDs[key.Name], key.ID)
		} else if sd.v.AddItem(hosting.Item("ssh_keys", i), err, nil) {
			sd.failedKeys[trimmed(k.Name)] = true
		} else {
			return err
		}
	}
	return nil
}

// domains makes r's DNS zones through the real create call.
func (sd *seeding) domains(ctx context.Context, r SeedRequest) error {
	for i, d := range r.Domains {
		made, err := sd.s.CreateDomain(ctx, sd.p, d)
		if err == nil {
			sd.out.Domains = append(sd.out.Domains, made)
		} else if !sd.v.AddItem(hosting.Item("domains", i), err, nil) {
			return err
		}
	}
	return nil
}

// projects makes r's projects through the real create call.
func (sd *seeding) projects(ctx context.Context, r SeedRequest) error {
	for i, pr := range r.Projects {
		made, err := sd.s.CreateProject(ctx, sd.p, pr.Name)
		if err == nil {
			sd.out.Projects = append(sd.out.Projects, made)
			sd.projectIDs[made.Name] = made.ID
		} else if sd.v.AddItem(hosting.Item("projects", i), err, nil) {
			sd.failedProjects[trimmed(pr.Name)] = true
		} else {
			return err
		}
	}
	return nil
}

// recipes makes r's recipes through the real create call.
func (sd *seeding) recipes(ctx context.Context, r SeedRequest) error {
	for i, rc := range r.Recipes {
		made, err := sd.s.CreateRecipe(ctx, sd.p, rc.Name, rc.Script)
		if err == nil {
			sd.out.Recipes = append(sd.out.Recipes, made)
		} else if !sd.v.AddItem(hosting.Item("recipes", i), err, nil) {
			return err
		}
	}
	return nil
}

// servers makes r's servers through the real order's checks and billing, each in its
// status at once (seedServer).
func (sd *seeding) servers(ctx context.Context, r SeedRequest) error {
	for i, sv := range r.Servers {
		item := hosting.Item("servers", i)
		o, status, refs := serverOrder(sv, sd.keyIDs, sd.projectIDs, sd.failedKeys, sd.failedProjects)
		if err := refs.Err(); err != nil {
			sd.v.AddItem(item, err, nil)
		}
		if sv.ImageID == nil {
			sd.failServer(sv)
			continue // an order would ask for image_id or app_id: a seed has only the first
		}
		srv, err := sd.s.seedServer(ctx, sd.p, o, status)
		if err == nil {
			sd.out.Servers = append(sd.out.Servers, srv)
			sd.serverIDs[srv.DisplayName] = append(sd.serverIDs[srv.DisplayName], srv.ID)
		} else if sd.v.AddItem(item, err, seedServerNames) {
			sd.failServer(sv)
		} else {
			return err
		}
	}
	return nil
}

// failServer notes that the server sv asked for was not made: a volume naming it is
// not told again.
func (sd *seeding) failServer(sv SeedServer) {
	if sv.DisplayName != nil {
		sd.failedServers[trimmed(sv.DisplayName)] = true
	}
}

// countProjectServers sets the server count of each seeded project.
func (sd *seeding) countProjectServers() {
	for i := range sd.out.Projects {
		for _, srv := range sd.out.Servers {
			if srv.ProjectID != nil && *srv.ProjectID == sd.out.Projects[i].ID {
				sd.out.Projects[i].ServerCount++
			}
		}
	}
}

// serverOrder is the order a seeded server makes and the status it is to be in, with
// what is wrong with its status, project and SSH keys and its image left out (refs).
// keys and projects find the ids of names; a name among failed is an item of the
// same request that failed, told about already.
func serverOrder(sv SeedServer, keys map[string][]int64, projects map[string]int64, failedKeys, failedProjects map[string]bool) (Order, hosting.Status, *hosting.Validation) {
	var v hosting.Validation
	o := Order{PlanID: sv.PlanID, LocationID: sv.LocationID, ImageID: sv.ImageID, DisplayName: sv.DisplayName,
		LicenseIDs: sv.LicenseIDs}
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
		m, err := s.instant.PlaceTx(ctx, tx.SQL(), MachineSpec(*srv), state)
		if err != nil {
			return internal("place machine", err)
		}
		if err := s.setServerAddresses(ctx, tx, srv.ID, m.IPv4, m.IPv6); err != nil {
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
		{len(r.Servers), seedServerFields}, {len(r.Volumes), seedVolumeFields}, {len(r.Domains), seedDomainFields}} {
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
