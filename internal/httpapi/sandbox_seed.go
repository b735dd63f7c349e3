package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
)

// The sandbox's reset and seed (docs/api.md, The sandbox).

// MaxSeedBody caps a seed's body: it may hold recipes of 64 KiB each.
const MaxSeedBody = 4 << 20

// resetAccount answers POST /sandbox/v1/reset: the account emptied (ops.ResetAccount)
// and its faults gone, as GET /me shows it then.
func (s *Server) resetAccount(r *request) (int, any, error) {
	var b api.SandboxReset
	if err := decode(r.Request, &b); err != nil {
		return 0, nil, err
	}
	a, err := s.svc.Sandbox.ResetAccount(r.ctx, r.p, b.Credit)
	if err != nil {
		return 0, nil, err
	}
	s.sandbox.ClearFaults(a.ID)
	r.p.Account = a
	return s.me(r)
}

// sandboxTicketReply answers POST /sandbox/v1/tickets/{id}/reply: a staff reply to
// one of the account's tickets (ops.SandboxStaffReply), 201 with the message. 404
// before a body's 422, as on /v1.
func (s *Server) sandboxTicketReply(r *request) (int, any, error) {
	id, err := pathID(r.Request)
	if err != nil {
		return 0, nil, err
	}
	if _, err := s.svc.Tickets.Ticket(r.ctx, r.p, id); err != nil {
		return 0, nil, err
	}
	var b api.SandboxTicketReply
	if err := decodeMax(r.Request, &b, MaxTicketBody); err != nil {
		return 0, nil, err
	}
	m, err := s.svc.Sandbox.SandboxStaffReply(r.ctx, r.p, id, b.Body, b.AuthorName)
	return http.StatusCreated, one(toTicketMessage(m)), err
}

// seedBody is api.SandboxSeed with its items still undecoded: each is decoded on its
// own, so that what is wrong with one is told at its place ("servers[0].plan_id").
type seedBody struct {
	SSHKeys  []json.RawMessage `json:"ssh_keys"`
	Projects []json.RawMessage `json:"projects"`
	Recipes  []json.RawMessage `json:"recipes"`
	Servers  []json.RawMessage `json:"servers"`
	Volumes  []json.RawMessage `json:"volumes"`
	Domains  []json.RawMessage `json:"domains"`
}

// seed answers POST /sandbox/v1/seed: 201 with what ops.Seed made.
func (s *Server) seed(r *request) (int, any, error) {
	var b seedBody
	if err := decodeMax(r.Request, &b, MaxSeedBody); err != nil {
		return 0, nil, err
	}
	var v hosting.Validation
	in := ops.SeedRequest{
		SSHKeys: decodeItems(&v, "ssh_keys", b.SSHKeys, func(k api.SSHKeyCreate) ops.SeedSSHKey {
			return ops.SeedSSHKey{Name: k.Name, PublicKey: k.PublicKey}
		}),
		Projects: decodeItems(&v, "projects", b.Projects, func(p api.ProjectWrite) ops.SeedProject {
			return ops.SeedProject{Name: p.Name}
		}),
		Recipes: decodeItems(&v, "recipes", b.Recipes, func(rc api.RecipeWrite) ops.SeedRecipe {
			return ops.SeedRecipe{Name: rc.Name, Script: rc.Script}
		}),
		Servers: decodeItems(&v, "servers", b.Servers, func(sv api.SandboxSeedServer) ops.SeedServer {
			return ops.SeedServer{DisplayName: sv.DisplayName, PlanID: sv.PlanID, LocationID: sv.LocationID, ImageID: sv.ImageID,
				Status: sv.Status, Project: sv.Project, SSHKeys: sv.SSHKeys, LicenseIDs: sv.LicenseIDs}
		}),
		Volumes: decodeItems(&v, "volumes", b.Volumes, func(vl api.SandboxSeedVolume) ops.SeedVolume {
			return ops.SeedVolume{Name: vl.Name, SizeGB: vl.SizeGB, LocationID: vl.LocationID, Format: vl.Format,
				Project: vl.Project, Server: vl.Server, Automount: vl.Automount}
		}),
		Domains: decodeItems(&v, "domains", b.Domains, func(d api.DomainCreate) ops.DomainCreate {
			return ops.DomainCreate{Name: d.Name, TTL: d.TTL, ZoneFile: d.ZoneFile}
		}),
	}
	if err := v.Err(); err != nil {
		return 0, nil, err
	}
	made, err := s.svc.Sandbox.Seed(r.ctx, r.p, in)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, one(api.SandboxSeeded{SSHKeys: list(made.SSHKeys, toSSHKey).Data,
		Projects: list(made.Projects, toProject).Data, Recipes: list(made.Recipes, toRecipe).Data,
		Servers: list(made.Servers, toServer).Data, Volumes: list(made.Volumes, toVolume).Data,
		Domains: list(made.Domains, s.toDomain).Data}), nil
}

// decodeItems decodes each item of a list of a body as a body of type W is decoded
// (the same rules: unknown fields, nulls, types), and converts it; what is wrong with
// item i goes to v under list[i].
func decodeItems[W, D any](v *hosting.Validation, list string, items []json.RawMessage, conv func(W) D) []D {
	out := make([]D, 0, len(items))
	for i, raw := range items {
		item := hosting.Item(list, i)
		if raw = bytes.TrimSpace(raw); string(raw) == "null" {
			if !v.Has(list) {
				v.Add(list, "validation.null_in_list") // as a list of any body says it
			}
			continue
		}
		if len(raw) == 0 || raw[0] != '{' {
			v.Add(item, "validation.type_object")
			continue
		}
		var w W
		if err := decodeMax(&http.Request{Body: io.NopCloser(bytes.NewReader(raw))}, &w, MaxSeedBody); err != nil {
			if !v.AddItem(item, err, nil) {
				v.Add(item, "validation.invalid_json")
			}
			continue
		}
		out = append(out, conv(w))
	}
	return out
}
