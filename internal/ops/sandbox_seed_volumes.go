package ops

import (
	"context"
	"strings"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// SeedVolume is a volume to seed: what POST /volumes takes, with its project and the
// server it is attached to by name (a server's display name), the account's or
// seeded by the same request.
type SeedVolume struct {
	Name            *string
	SizeGB          *int64
	LocationID      *int64
	Format          *string
	Project, Server *string
	Automount       *bool
}

// seedVolumeNames are a volume order's fields as a seeded volume names them.
var seedVolumeNames = map[string]string{"project_id": "project", "server_id": "server"}

// volumes makes r's volumes through the real creation's checks and billing, each
// available at once (seedVolume).
func (sd *seeding) volumes(ctx context.Context, r SeedRequest) error {
	for i, sv := range r.Volumes {
		item := hosting.Item("volumes", i)
		o, refs := volumeOrder(sv, sd.serverIDs, sd.projectIDs, sd.failedServers, sd.failedProjects)
		if err := refs.Err(); err != nil {
			sd.v.AddItem(item, err, nil)
		}
		if sv.Server != nil && o.ServerID == nil {
			// Its server is none: what the volume says by itself is all there is to check.
			var v hosting.Validation
			placed := o
			placed.ServerID = new(int64)
			checkVolumeOrder(&v, placed)
			sd.v.AddItem(item, v.Err(volumeFields...), seedVolumeNames)
			continue
		}
		vol, err := sd.s.seedVolume(ctx, sd.p, o)
		if err == nil {
			sd.out.Volumes = append(sd.out.Volumes, vol)
		} else if !sd.v.AddItem(item, err, seedVolumeNames) {
			return err
		}
	}
	return nil
}

// volumeOrder is the order a seeded volume makes, with what is wrong with its project
// and server (refs). servers and projects find the ids of names; a name among failed
// is an item of the same request that failed, told about already.
func volumeOrder(sv SeedVolume, servers map[string][]int64, projects map[string]int64, failedServers, failedProjects map[string]bool) (VolumeOrder, *hosting.Validation) {
	var v hosting.Validation
	o := VolumeOrder{Name: sv.Name, SizeGB: sv.SizeGB, LocationID: sv.LocationID, Format: sv.Format, Automount: sv.Automount}
	if sv.Project != nil {
		name := strings.TrimSpace(*sv.Project)
		if id, ok := projects[name]; ok {
			o.ProjectID = &id
		} else if !failedProjects[name] {
			v.Add("project", "validation.sandbox_project_unknown", "name", name)
		}
	}
	if sv.Server != nil {
		name := strings.TrimSpace(*sv.Server)
		switch ids := servers[name]; {
		case len(ids) == 1:
			o.ServerID = &ids[0]
		case len(ids) > 1:
			v.Add("server", "validation.sandbox_server_ambiguous", "name", name)
		case !failedServers[name]:
			v.Add("server", "validation.sandbox_server_unknown", "name", name)
		}
	}
	return o, &v
}

// seedVolume creates a volume as POST /volumes does, available at once: its driver's
// volume is made in the same transaction, attached to the order's server (automounted
// as asked) when it names one, and no operation runs.
func (s *Service) seedVolume(ctx context.Context, p hosting.Principal, o VolumeOrder) (hosting.Volume, error) {
	return s.createVolume(ctx, p, o, volumeMaker{status: hosting.VolumeAvailable, attached: true,
		made: func(ctx context.Context, tx store.Tx, vol *hosting.Volume, t volumeTarget) error {
			machine := ""
			if t.srv != nil {
				machine = t.srv.Name
			}
			err := s.instant.PlaceVolumeTx(ctx, tx.SQL(), VolumeSpec(*vol), machine, deref(o.Automount))
			return internal("place volume", err)
		}})
}

// VolumeSpec is the driver's volume of vol: its name, id, place, size and filesystem.
func VolumeSpec(vol hosting.Volume) compute.VolumeSpec {
	return compute.VolumeSpec{Name: vol.DriverName(), ID: vol.ID, LocationID: vol.LocationID, SizeGB: vol.SizeGB, Format: vol.Format}
}
