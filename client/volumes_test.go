package client_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

// everyVolumeEndpoint: each volume method against a real Berth, from creation on
// srv to deletion, with the errors a client handles apart.
func everyVolumeEndpoint(t *testing.T, ctx context.Context, c *client.Client, srv *api.Server) {
	t.Helper()
	vol := must[*api.Volume](t)(c.CreateVolume(ctx, api.VolumeCreate{Name: client.Ptr("sdk-data"), SizeGB: client.Ptr(int64(10)),
		LocationID: client.Ptr(srv.LocationID), Format: client.Ptr("ext4")}))
	if vol.Status != "creating" || vol.Operation == nil {
		t.Fatalf("CreateVolume: %+v", vol)
	}
	must[*api.Operation](t)(c.WaitOperation(ctx, vol.Operation.ID))
	if got := must[*api.Volume](t)(c.GetVolume(ctx, "sdk-data")); got.ID != vol.ID || got.Status != "available" {
		t.Errorf("GetVolume by name: %+v", got)
	}
	vol = must[*api.Volume](t)(c.AttachVolume(ctx, "sdk-data", srv.ID, true))
	if op := must[*api.Operation](t)(c.WaitOperation(ctx, vol.Operation.ID)); op.Type != "attach_volume" || op.ServerID == nil || *op.ServerID != srv.ID {
		t.Errorf("the attachment: %+v", op)
	}
	if l := must[[]api.Volume](t)(c.ListVolumes(ctx, client.VolumeListOptions{ServerID: srv.ID})); len(l) != 1 || l[0].ID != vol.ID {
		t.Errorf("ListVolumes of the server: %+v", l)
	}
	if err := c.DeleteVolume(ctx, "sdk-data"); !errors.Is(err, client.ErrValidation) {
		t.Errorf("DeleteVolume while attached: %v, want ErrValidation", err)
	}
	vol = must[*api.Volume](t)(c.ResizeVolume(ctx, "sdk-data", 20))
	must[*api.Operation](t)(c.WaitOperation(ctx, vol.Operation.ID))
	vol = must[*api.Volume](t)(c.DetachVolume(ctx, "sdk-data"))
	must[*api.Operation](t)(c.WaitOperation(ctx, vol.Operation.ID))
	vol = must[*api.Volume](t)(c.UpdateVolume(ctx, "sdk-data", api.VolumeUpdate{Name: client.Ptr("sdk-archive")}))
	if vol.Name != "sdk-archive" || vol.SizeGB != 20 || vol.ServerID != nil {
		t.Errorf("UpdateVolume: %+v", vol)
	}
	if err := c.DeleteVolume(ctx, "sdk-archive"); err != nil {
		t.Errorf("DeleteVolume: %v", err)
	}
	if _, err := c.GetVolume(ctx, "sdk-archive"); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("GetVolume of a deleted volume: %v, want ErrNotFound", err)
	}
	volumeOperations(t, ctx, c, vol.ID)
}

// volumeOperations: the operations of the (deleted) volume id, by ListOperations and
// AllOperations, a bad VolumeID an ErrValidation on volume_id, and
// ListServerOperations refusing a VolumeID before asking.
func volumeOperations(t *testing.T, ctx context.Context, c *client.Client, id int64) {
	t.Helper()
	want := []string{"detach_volume", "resize_volume", "attach_volume", "create_volume"}
	p := must[*api.Page[api.Operation]](t)(c.ListOperations(ctx, client.OperationListOptions{VolumeID: id}))
	var got []string
	for _, o := range p.Data {
		if o.VolumeID == nil || *o.VolumeID != id {
			t.Errorf("ListOperations of volume %d: %+v", id, o)
		}
		got = append(got, o.Type)
	}
	if !slices.Equal(got, want) || p.Meta.Total != 4 {
		t.Errorf("ListOperations of the volume: %v (total %d), want %v", got, p.Meta.Total, want)
	}
	n := 0
	for o, err := range c.AllOperations(ctx, client.OperationListOptions{VolumeID: id, Status: "success"}) {
		if err != nil || o.VolumeID == nil || *o.VolumeID != id {
			t.Fatalf("AllOperations of the volume: %+v, %v", o, err)
		}
		n++
	}
	if n != 4 {
		t.Errorf("AllOperations of the volume: %d, want 4", n)
	}
	var e *client.Error
	if _, err := c.ListOperations(ctx, client.OperationListOptions{VolumeID: -1}); !errors.As(err, &e) ||
		!errors.Is(err, client.ErrValidation) || len(e.Fields["volume_id"]) != 1 {
		t.Errorf("VolumeID -1: %v, want ErrValidation on volume_id", err)
	}
	if _, err := c.ListServerOperations(ctx, "x", client.OperationListOptions{VolumeID: id}); err == nil || errors.As(err, &e) {
		t.Errorf("ListServerOperations with a VolumeID: %v, want a refusal before any request", err)
	}
}
