package httpapi

import (
	"bufio"
	"encoding/json"
	"io"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
)

func opRef(op *hosting.Operation) *api.OperationRef {
	if op == nil {
		return nil
	}
	return &api.OperationRef{ID: op.ID, Type: string(op.Type), StartedAt: op.StartedAt}
}

func toServer(s hosting.Server) api.Server {
	keys := s.SSHKeyIDs
	if keys == nil {
		keys = []int64{}
	}
	return api.Server{
		ID: s.ID, Name: s.Name, DisplayName: s.DisplayName, ProjectID: s.ProjectID, Status: string(s.ShownStatus()),
		Operation: opRef(s.Operation), LocationID: s.LocationID, PlanID: s.PlanID, ImageID: s.ImageID,
		AppID: s.AppID, RecipeID: s.RecipeID, VCPUs: s.VCPUs, MemoryMB: s.MemoryMB, DiskGB: s.DiskGB,
		IPv4: s.IPv4, IPv6: s.IPv6, SSHKeyIDs: keys, CreatedAt: s.CreatedAt,
	}
}

func toOperation(o hosting.Operation) api.Operation {
	out := api.Operation{ID: o.ID, Type: string(o.Type), VolumeID: o.VolumeID, Status: string(o.Status),
		StartedAt: o.StartedAt, FinishedAt: o.FinishedAt}
	if o.ServerID != 0 {
		id := o.ServerID
		out.ServerID = &id
	}
	if o.Error != "" {
		e := o.Error
		out.Error = &e
	}
	return out
}

// toPlan is a plan as clients see it: a limit is shown only when the plan has it.
func toPlan(p hosting.Plan, inStock bool) api.Plan {
	limit := func(v int) *int {
		if v <= 0 {
			return nil
		}
		return &v
	}
	return api.Plan{ID: p.ID, Name: p.Name, VCPUs: p.VCPUs, MemoryMB: p.MemoryMB, DiskGB: p.DiskGB,
		PriceHourly: p.PriceHourly.String(), PriceMonthly: p.PriceMonthly.String(),
		NetworkMbps: limit(p.NetworkMbps), DiskIOPS: limit(p.DiskIOPS), DiskMBps: limit(p.DiskMBps), InStock: inStock}
}

func toLocation(l ops.LocationOffer) api.Location {
	out := api.Location{ID: l.ID, Name: l.Name, City: l.City, Country: l.Country,
		SnapshotPriceGBHour: l.SnapshotPriceGBHour.String(), Plans: []api.Plan{}, Images: []api.Image{}}
	if l.VolumePriceGBHour != 0 || l.VolumePriceGBMonth != 0 {
		h, m := l.VolumePriceGBHour.String(), l.VolumePriceGBMonth.String()
		out.VolumePriceGBHour, out.VolumePriceGBMonth = &h, &m
	}
	for _, p := range l.Plans {
		out.Plans = append(out.Plans, toPlan(p, l.InStock[p.ID]))
	}
	for _, i := range l.Images {
		out.Images = append(out.Images, api.Image{ID: i.ID, Name: i.Name, OS: i.OS, Version: i.Version})
	}
	return out
}

func toSSHKey(k hosting.SSHKey) api.SSHKey {
	return api.SSHKey{ID: k.ID, Name: k.Name, PublicKey: k.PublicKey, Fingerprint: k.Fingerprint, CreatedAt: k.CreatedAt}
}

func toProject(p hosting.Project) api.Project {
	return api.Project{ID: p.ID, Name: p.Name, ServerCount: p.ServerCount, CreatedAt: p.CreatedAt}
}

func toRecipe(r hosting.Recipe) api.Recipe {
	return api.Recipe{ID: r.ID, Name: r.Name, Script: r.Script, CreatedAt: r.CreatedAt}
}

// list converts a slice, never answering null.
func list[D, W any](in []D, f func(D) W) api.List[W] {
	out := make([]W, len(in))
	for i, d := range in {
		out[i] = f(d)
	}
	return api.List[W]{Data: out}
}

// stream is a body written as it is read, for a list too heavy to hold whole: run
// writes it to w. An error after the answer has started cuts the connection, so
// that the client sees a broken answer, never a short list that looks whole.
type stream func(w io.Writer) error

// streamList streams {"data": [...]}: the items of first, then of the pages next
// reads after the last item so far, until a page shorter than size.
func streamList[D, W any](first []D, size int, f func(D) W, next func(last D) ([]D, error)) stream {
	return func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		_, _ = bw.WriteString(`{"data":[`)
		page, n := first, 0
		for {
			for _, d := range page {
				item, err := json.Marshal(f(d))
				if err != nil {
					return err
				}
				if n > 0 {
					_ = bw.WriteByte(',')
				}
				if _, err := bw.Write(item); err != nil {
					return err
				}
				n++
			}
			if len(page) < size {
				break
			}
			var err error
			if page, err = next(page[len(page)-1]); err != nil {
				return err
			}
		}
		_, _ = bw.WriteString("]}\n")
		return bw.Flush()
	}
}

func one[T any](v T) api.One[T] { return api.One[T]{Data: v} }

func toVolume(v hosting.Volume) api.Volume {
	out := api.Volume{ID: v.ID, Name: v.Name, SizeGB: v.SizeGB, LocationID: v.LocationID, ProjectID: v.ProjectID,
		ServerID: v.ServerID, Status: string(v.Status), Operation: opRef(v.Operation), LinuxDevice: compute.VolumeDevice(v.ID),
		CreatedAt: v.CreatedAt}
	if v.Format != "" {
		f := v.Format
		out.Format = &f
	}
	return out
}
