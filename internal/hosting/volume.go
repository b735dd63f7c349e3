package hosting

import (
	"strconv"
	"strings"
	"time"
)

// VolumeStatus is where a volume stands (docs/api.md, Volumes).
type VolumeStatus string

const (
	VolumeCreating  VolumeStatus = "creating"
	VolumeAvailable VolumeStatus = "available"
	VolumeError     VolumeStatus = "error"
)

// The operations of volumes: each holds its volume, and the server it attaches to,
// detaches from or grows on, while it runs.
const (
	OpCreateVolume OpType = "create_volume"
	OpAttachVolume OpType = "attach_volume"
	OpDetachVolume OpType = "detach_volume"
	OpResizeVolume OpType = "resize_volume"
)

// Volume rules (docs/api.md, Volumes).
const (
	VolumeNameMaxLen = 64
	VolumeMinGB      = 10
	VolumeMaxGB      = 10240
	// VolumesPerServer bounds the volumes attached to one server.
	VolumesPerServer = 16
)

// VolumeFormats are the filesystems a volume can be made with.
var VolumeFormats = []string{"ext4", "xfs"}

// ResourceVolume is what the ledger charges a volume as.
const ResourceVolume = "volume"

// Volume is a block volume of an account: it lives in a location, attached to at most
// one server of it, and outlives the servers it was attached to.
type Volume struct {
	ID         int64
	AccountID  int64
	Name       string
	SizeGB     int
	LocationID int64
	ProjectID  *int64
	// ServerID is the server it is attached to (nil: detached).
	ServerID *int64
	// Format is the filesystem made at creation ("" for none).
	Format    string
	Status    VolumeStatus
	Operation *Operation
	CreatedAt time.Time
	DeletedAt *time.Time
}

// DriverName is the name the compute driver knows the volume by.
func (v *Volume) DriverName() string { return "volume-" + strconv.FormatInt(v.ID, 10) }

// VolumeRef is how a path names a volume: by numeric id or by name.
type VolumeRef struct {
	ID   int64
	Name string
}

// ParseVolumeRef reads the {id} path parameter of a volume: digits are an id,
// anything else a name. ok is false when it can name no volume at all.
func ParseVolumeRef(s string) (ref VolumeRef, ok bool) {
	if id, err := ParseID(s); err == nil {
		return VolumeRef{ID: id}, true
	}
	var v Validation
	CheckVolumeName(&v, "name", s)
	if v.Has("name") {
		return ref, false
	}
	return VolumeRef{Name: s}, true
}

// CheckVolumeName validates a volume name: 1 to 64 characters of lower-case letters,
// digits and dashes, starting with a letter or digit, and not digits only (a path
// reads digits as an id, so such a name could never be used in one).
func CheckVolumeName(v *Validation, field, s string) {
	switch {
	case s == "":
		v.Add(field, "validation.required")
	case len(s) > VolumeNameMaxLen:
		v.Add(field, "validation.between_chars", "min", 1, "max", VolumeNameMaxLen)
	case s[0] == '-' || strings.ContainsFunc(s, func(r rune) bool { return !(r >= 'a' && r <= 'z') && !(r >= '0' && r <= '9') && r != '-' }):
		v.Add(field, "validation.volume_name_chars")
	case strings.Trim(s, "0123456789") == "":
		v.Add(field, "validation.volume_name_digits")
	}
}

// CheckVolumeSize validates a size in GB: 10 to 10240.
func CheckVolumeSize(v *Validation, field string, gb int64) {
	if gb < VolumeMinGB || gb > VolumeMaxGB {
		v.Add(field, "validation.volume_size", "min", VolumeMinGB, "max", VolumeMaxGB)
	}
}

// CheckVolumeFormat validates a filesystem name given (leaving it out is none).
func CheckVolumeFormat(v *Validation, field, s string) {
	if s != "ext4" && s != "xfs" {
		v.Add(field, "validation.volume_format", "formats", strings.Join(VolumeFormats, ", "))
	}
}
