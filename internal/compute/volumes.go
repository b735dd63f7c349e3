package compute

import (
	"context"
	"errors"
	"strconv"
	"time"
)

// Volumes is a driver that keeps block volumes and attaches them to its machines
// (docs/api.md, Volumes). A driver without it sells no volumes: Berth refuses to
// create one where it runs.
//
// A volume is named by Berth ("volume-<id>") and lives in a location, apart from any
// machine: it outlives the machines it was attached to. The guest sees an attached
// volume as a SCSI disk of vendor "BERTH", product "Volume" and serial the volume's
// id, so that it is /dev/disk/by-id/scsi-0BERTH_Volume_<id> inside (VolumeDevice).
//
// Every mutating call takes a key, as Driver's do, and is safe to repeat with it: a
// repeat of an attach already done, a detach of a volume no longer attached, a
// delete of an absent volume and a resize to the size it has are no errors.
type Volumes interface {
	// CreateVolume makes a volume of spec.SizeGB GiB in spec.LocationID, with the
	// filesystem spec.Format on it ("" for none), detached.
	CreateVolume(ctx context.Context, key string, spec VolumeSpec) error
	// AttachVolume attaches the volume to machine, running (hot-plug: the guest sees
	// the disk at once) or stopped (it sees it at its next boot), so that it stays
	// attached across the machine's restarts. With automount, the guest mounts the
	// volume's filesystem at /mnt/volume-<id> (VolumeMountPoint) when it sees it, at
	// a boot or on the hot-plug, as the hook Berth's first-boot configuration
	// installs on every machine does. A volume attached to another machine is
	// ErrFailed; one attached to machine already is no error.
	AttachVolume(ctx context.Context, key, machine string, spec VolumeSpec, automount bool) error
	// DetachVolume detaches the volume from machine. From a running machine the guest
	// is asked to release the disk and the call waits up to timeout for it: a guest
	// that has not released it by then leaves it attached, and the call answers
	// ErrDetachTimeout. From a stopped machine it is at once.
	DetachVolume(ctx context.Context, key, machine, volume string, timeout time.Duration) error
	// ResizeVolume grows the volume to sizeGB GiB (a size not larger than its own
	// leaves it as it is), attached or not; a running guest it is attached to sees
	// the new size without a reboot. The filesystem on it is not grown.
	ResizeVolume(ctx context.Context, key, volume string, sizeGB int) error
	// DeleteVolume removes a detached volume and its data; an absent one is no
	// error, an attached one is ErrFailed.
	DeleteVolume(ctx context.Context, key, volume string) error
	// Volume reports what the driver knows of a volume; ErrVolumeNotFound when it
	// does not exist.
	Volume(ctx context.Context, volume string) (VolumeState, error)
}

// VolumeSpec describes a volume.
type VolumeSpec struct {
	// Name is Berth's name of it, "volume-<id>" (VolumeName).
	Name string
	// ID is the serial the guest sees.
	ID         int64
	LocationID int64
	SizeGB     int
	// Format is the filesystem made at creation: "ext4", "xfs" or "" (none).
	Format string
}

// VolumeState is what a driver knows of one volume.
type VolumeState struct {
	Name   string
	SizeGB int
	// Machine is the machine it is attached to, "" when detached.
	Machine string
}

var (
	// ErrVolumeNotFound: no volume of that name exists.
	ErrVolumeNotFound = errors.New("compute: volume not found")
	// ErrDetachTimeout: the guest did not release the volume in time; it stays
	// attached.
	ErrDetachTimeout = errors.New("compute: guest did not release the volume in time")
)

// VolumeName is the driver's name of volume id.
func VolumeName(id int64) string { return "volume-" + strconv.FormatInt(id, 10) }

// VolumeDevice is the path of volume id inside a guest it is attached to.
func VolumeDevice(id int64) string {
	return "/dev/disk/by-id/scsi-0BERTH_Volume_" + strconv.FormatInt(id, 10)
}

// VolumeMountPoint is where a guest automounts volume id.
func VolumeMountPoint(id int64) string { return "/mnt/volume-" + strconv.FormatInt(id, 10) }

// VolumeDetachTimeout is how long a detach from a running machine waits for its
// guest (docs/api.md, Volumes).
const VolumeDetachTimeout = 60 * time.Second
