package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/berthhq/berth/api"
)

// Volumes are block storage an account keeps in a location and attaches to one of
// its servers there (docs/api.md, Volumes). A volume is named by its id or its name
// (volume). Reading them needs read; changing them the scope storage
// (ErrMissingScope otherwise). Creating, attaching, detaching and growing one start
// an operation, named in the answer's Operation: WaitOperation waits for its end.
// While it runs, the volume, and the server it concerns, answer other changes with
// ErrBusy.

// VolumeListOptions narrows ListVolumes: the volumes attached to one server, or in
// one project (0: any).
type VolumeListOptions struct {
	ServerID  int64
	ProjectID int64
}

func volumePath(volume, rest string) string { return "/volumes/" + url.PathEscape(volume) + rest }

// ListVolumes returns the account's volumes that opts admit, oldest first (at most
// the volume quota, 100).
func (c *Client) ListVolumes(ctx context.Context, opts VolumeListOptions) ([]api.Volume, error) {
	q := url.Values{}
	if opts.ServerID != 0 {
		q.Set("server_id", strconv.FormatInt(opts.ServerID, 10))
	}
	if opts.ProjectID != 0 {
		q.Set("project_id", strconv.FormatInt(opts.ProjectID, 10))
	}
	return list[api.Volume](c, ctx, "/volumes", q)
}

// CreateVolume makes a volume of req.SizeGB (10 to 10240) named req.Name, in
// req.LocationID, or on req.ServerID (its location; attached once made, mounted at
// /mnt/volume-<id> with req.Automount and a req.Format). It answers the volume
// creating. ErrValidation (Fields names each failed check; the quotas under "name"
// and "size_gb"), ErrInsufficientCredit (the first hour), ErrBusy (the server).
func (c *Client) CreateVolume(ctx context.Context, req api.VolumeCreate) (*api.Volume, error) {
	return one[api.Volume](c, ctx, http.MethodPost, "/volumes", nil, req)
}

// GetVolume returns a volume. ErrNotFound.
func (c *Client) GetVolume(ctx context.Context, volume string) (*api.Volume, error) {
	return one[api.Volume](c, ctx, http.MethodGet, volumePath(volume, ""), nil, nil)
}

// UpdateVolume renames a volume or moves it between projects (api.Null: none);
// allowed while it is busy. ErrNotFound, ErrValidation.
func (c *Client) UpdateVolume(ctx context.Context, volume string, req api.VolumeUpdate) (*api.Volume, error) {
	return one[api.Volume](c, ctx, http.MethodPatch, volumePath(volume, ""), nil, req)
}

// DeleteVolume deletes a detached volume and its data. ErrNotFound, ErrBusy,
// ErrValidation (attached: detach it first, "server_id").
func (c *Client) DeleteVolume(ctx context.Context, volume string) error {
	return c.do(ctx, http.MethodDelete, volumePath(volume, ""), nil, nil, nil)
}

// AttachVolume attaches a volume to a server of the same location, running or
// stopped; with automount the guest mounts a formatted one. ErrNotFound, ErrBusy,
// ErrValidation ("server_id": another location, 16 volumes already, attached
// elsewhere).
func (c *Client) AttachVolume(ctx context.Context, volume string, serverID int64, automount bool) (*api.Volume, error) {
	return one[api.Volume](c, ctx, http.MethodPost, volumePath(volume, "/attach"), nil,
		api.VolumeAttach{ServerID: &serverID, Automount: &automount})
}

// DetachVolume detaches a volume from its server. A running guest must release the
// disk within 60 s, or the operation ends in error with the volume still attached.
// ErrNotFound, ErrBusy, ErrValidation (not attached).
func (c *Client) DetachVolume(ctx context.Context, volume string) (*api.Volume, error) {
	return one[api.Volume](c, ctx, http.MethodPost, volumePath(volume, "/detach"), nil, nil)
}

// ResizeVolume grows a volume to sizeGB; the filesystem on it is not grown.
// ErrNotFound, ErrBusy, ErrValidation ("size_gb": not larger, too large, the quota).
func (c *Client) ResizeVolume(ctx context.Context, volume string, sizeGB int64) (*api.Volume, error) {
	return one[api.Volume](c, ctx, http.MethodPost, volumePath(volume, "/resize"), nil, api.VolumeResize{SizeGB: &sizeGB})
}
