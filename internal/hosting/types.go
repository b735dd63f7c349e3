package hosting

import (
	"fmt"
	"time"
)

// Languages Berth speaks; anything else falls back to English.
var Languages = []string{"en", "de", "fr"}

// Account is a customer account: it holds credit, tokens and resources.
type Account struct {
	ID           int64
	Email        string
	Name         string
	PasswordHash string
	Language     string
	Currency     string
	Credit       Money
	// Budget is the monthly budget the holder set (nil: none).
	Budget  *Money
	Blocked bool
	// Staff answer every account's support tickets (berthd admin staff add).
	Staff bool
	// Quotas bound what the account may hold.
	Quotas    Quotas
	CreatedAt time.Time
}

// Quotas bound what an account may hold at once: live servers, SSH keys, projects,
// recipes, live snapshots (of all its servers together) and tokens that can still
// authenticate. They also bound every list the API does not paginate (docs/api.md,
// Wire format). 0 means none may be made. The same shape counts what an account holds
// (Usage).
type Quotas struct {
	Servers, SSHKeys, Projects, Recipes, Snapshots, Tokens int
	// Volumes counts live volumes, VolumeGB their sizes together (docs/api.md,
	// Volumes).
	Volumes, VolumeGB int
	// Zones counts DNS zones (docs/api.md, Domains).
	Zones int
	// Tickets counts support tickets not closed; AttachmentMB the MiB of the
	// account's attachments together (counted up to whole MiB).
	Tickets, AttachmentMB int
}

// DefaultQuotas are a new account's. Recipes are the heaviest item (a script of up
// to 64 KiB each): 50 of them make a list of at most 3.2 MiB of scripts.
var DefaultQuotas = Quotas{Servers: 50, SSHKeys: 100, Projects: 100, Recipes: 50, Snapshots: 100, Tokens: 50,
	Volumes: 100, VolumeGB: 10240, Zones: 100, Tickets: 20, AttachmentMB: 100}

// QuotaKind names one quota: the key of its 422 in `errors` is Field, its message
// Message, its admin flag "--quota-" + Flag.
type QuotaKind struct {
	Field, Message, Flag string
	Of                   func(*Quotas) *int
}

// The quota kinds.
var (
	QuotaServers   = QuotaKind{"server_quota", "validation.quota_exceeded", "servers", func(q *Quotas) *int { return &q.Servers }}
	QuotaSSHKeys   = QuotaKind{"ssh_key_quota", "validation.ssh_key_quota", "ssh-keys", func(q *Quotas) *int { return &q.SSHKeys }}
	QuotaProjects  = QuotaKind{"project_quota", "validation.project_quota", "projects", func(q *Quotas) *int { return &q.Projects }}
	QuotaRecipes   = QuotaKind{"recipe_quota", "validation.recipe_quota", "recipes", func(q *Quotas) *int { return &q.Recipes }}
	QuotaSnapshots = QuotaKind{"snapshot_quota", "validation.snapshot_quota", "snapshots", func(q *Quotas) *int { return &q.Snapshots }}
	QuotaTokens    = QuotaKind{"token_quota", "validation.token_quota", "tokens", func(q *Quotas) *int { return &q.Tokens }}
	QuotaVolumes   = QuotaKind{"name", "validation.volume_quota", "volumes", func(q *Quotas) *int { return &q.Volumes }}
	// QuotaVolumeGB bounds the sizes of the live volumes together: a volume made or
	// grown may not take them past it (checked by size, not by count).
	QuotaVolumeGB = QuotaKind{"size_gb", "validation.volume_gb_quota", "volume-gb", func(q *Quotas) *int { return &q.VolumeGB }}
	QuotaZones    = QuotaKind{"name", "validation.zone_quota", "zones", func(q *Quotas) *int { return &q.Zones }}
	QuotaTickets  = QuotaKind{"ticket_quota", "validation.ticket_quota", "tickets", func(q *Quotas) *int { return &q.Tickets }}
	// QuotaAttachmentMB bounds the sizes of an account's attachments together, in
	// MiB: an upload may not take them past it (checked by bytes).
	QuotaAttachmentMB = QuotaKind{"body", "validation.attachment_quota", "attachment-mb", func(q *Quotas) *int { return &q.AttachmentMB }}
	QuotaKinds        = []QuotaKind{QuotaServers, QuotaSSHKeys, QuotaProjects, QuotaRecipes, QuotaSnapshots, QuotaTokens,
		QuotaVolumes, QuotaVolumeGB, QuotaZones, QuotaTickets, QuotaAttachmentMB}
)

// Token is an API token. Its secret is never stored, only its SHA-256 hash.
type Token struct {
	ID         int64
	AccountID  int64
	Name       string
	Hash       []byte
	Scopes     Scopes
	ExpiresAt  *time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
	CreatedAt  time.Time
}

// Usable reports whether the token may authenticate a request at now.
func (t *Token) Usable(now time.Time) bool {
	return t.RevokedAt == nil && (t.ExpiresAt == nil || now.Before(*t.ExpiresAt))
}

// Principal is who is asking: an account through one of its tokens.
type Principal struct {
	Account Account
	Token   Token
}

// Location is a place servers run, with the plans and images offered there.
type Location struct {
	ID                  int64
	Name                string
	City                string
	Country             string
	SnapshotPriceGBHour Money
	// VolumePriceGBHour and VolumePriceGBMonth price a volume's GB for an hour and
	// for a calendar month (the cap); both 0: the location sells no volumes.
	VolumePriceGBHour  Money
	VolumePriceGBMonth Money
	Plans              []Plan
	Images             []Image
}

// Plan is a server size with its prices.
type Plan struct {
	ID           int64
	Name         string
	VCPUs        int
	MemoryMB     int
	DiskGB       int
	PriceHourly  Money
	PriceMonthly Money
	// Throughput limits a server of the plan gets; 0 is no limit. NetworkMbps caps
	// each direction of its network in megabits per second; DiskIOPS its disk's
	// operations per second and DiskMBps its disk's megabytes (10^6 bytes) per second,
	// reads and writes together.
	NetworkMbps int
	DiskIOPS    int
	DiskMBps    int
	// Capacity is how many servers of this plan the location can hold (nil: no limit);
	// only set when read in the context of a location.
	Capacity *int
}

// Image is an operating-system image.
type Image struct {
	ID      int64
	Name    string
	OS      string
	Version string
}

// App is a one-click application, installed on the location's Ubuntu image.
type App struct {
	ID          int64
	Name        string
	Description string
	Version     string
	Script      string
}

// SSHKey is a stored public key of an account.
type SSHKey struct {
	ID          int64
	AccountID   int64
	Name        string
	PublicKey   string
	Fingerprint string
	CreatedAt   time.Time
}

// Project is a folder of servers.
type Project struct {
	ID          int64
	AccountID   int64
	Name        string
	ServerCount int
	CreatedAt   time.Time
}

// Recipe is a shell script run once at a server's first boot.
type Recipe struct {
	ID        int64
	AccountID int64
	Name      string
	Script    string
	// ScriptSize is the script's length in bytes, set where the script itself is
	// left out (store.Reader.RecipeNames).
	ScriptSize int
	CreatedAt  time.Time
}

// Status is the life-cycle status of a server (docs/api.md, Servers).
type Status string

const (
	StatusProvisioning Status = "provisioning"
	StatusRunning      Status = "running"
	StatusStarting     Status = "starting"
	StatusStopping     Status = "stopping"
	StatusStopped      Status = "stopped"
	StatusReinstalling Status = "reinstalling"
	StatusRescaling    Status = "rescaling"
	StatusRestoring    Status = "restoring"
	StatusSuspended    Status = "suspended"
	StatusError        Status = "error"
)

// Statuses lists every status a server can show.
var Statuses = []Status{StatusProvisioning, StatusRunning, StatusStarting, StatusStopping,
	StatusStopped, StatusReinstalling, StatusRescaling, StatusRestoring, StatusSuspended, StatusError}

// Server is a virtual server of an account.
type Server struct {
	ID          int64
	AccountID   int64
	Name        string
	DisplayName string
	ProjectID   *int64
	// Status is the machine's life-cycle status; Suspended overrides what is shown.
	Status    Status
	Suspended bool
	// Why it is suspended: an operator's decision, exhausted credit, or both. Each
	// is lifted on its own (admin unsuspend; a top-up).
	SuspendedByOperator bool
	SuspendedForCredit  bool
	Operation           *Operation
	LocationID          int64
	PlanID              int64
	ImageID             int64
	AppID               *int64
	RecipeID            *int64
	VCPUs               int
	MemoryMB            int
	DiskGB              int
	IPv4                *string
	IPv6                *string
	RootPassHash        string
	// SSHKeyIDs are the ids of the stored keys the server was ordered with; Keys are
	// the copies it was built with (read only when building).
	SSHKeyIDs []int64
	Keys      []SSHKey
	CreatedAt time.Time
	DeletedAt *time.Time
}

// ShownStatus is the status a client sees.
func (s *Server) ShownStatus() Status {
	if s.Suspended {
		return StatusSuspended
	}
	return s.Status
}

// OpType is the kind of an operation.
type OpType string

const (
	OpProvision OpType = "provision"
	OpPower     OpType = "power"
	OpReinstall OpType = "reinstall"
	OpRescale   OpType = "rescale"
	OpSnapshot  OpType = "snapshot"
	OpRestore   OpType = "restore"
	OpDelete    OpType = "delete"
)

// OpTypes is every kind of operation, the volumes' included (volume.go), in the order
// of the API's document.
var OpTypes = []OpType{OpProvision, OpPower, OpReinstall, OpRescale, OpSnapshot, OpRestore, OpDelete,
	OpCreateVolume, OpAttachVolume, OpDetachVolume, OpResizeVolume}

// OpStatus is where an operation stands.
type OpStatus string

const (
	OpRunning OpStatus = "running"
	OpSuccess OpStatus = "success"
	OpError   OpStatus = "error"
)

// Operation is one durable change to a server, carried out by a job. A server has at
// most one running operation: that is what busy means.
type Operation struct {
	ID        int64
	AccountID int64
	// ServerID is the server it changes; 0 for a volume's operation that concerns
	// no server (the creation of a detached volume, a detached volume's resize).
	ServerID int64
	// VolumeID is the volume a volume's operation changes.
	VolumeID *int64
	// SizeGB is what an OpResizeVolume grows the volume to; Automount whether an
	// OpAttachVolume (or an OpCreateVolume attaching) asks the guest to mount it.
	SizeGB    int
	Automount bool
	Type      OpType
	Action    PowerAction // for OpPower
	// SnapshotID is the snapshot an OpSnapshot takes or an OpRestore restores.
	SnapshotID *int64
	// ImageID is the image an OpReinstall writes.
	ImageID *int64
	// PlanID and UpgradeDisk are what an OpRescale moves to.
	PlanID      *int64
	UpgradeDisk bool
	// AfterStatus is the status an OpRestore from a disk-only snapshot ends in.
	AfterStatus Status
	Status      OpStatus
	Error       string
	StartedAt   time.Time
	FinishedAt  *time.Time
}

// Label is how logs name an operation: its type, its power action, its id
// ("power(off)#12").
func (o Operation) Label() string {
	if o.Action != "" {
		return fmt.Sprintf("%s(%s)#%d", o.Type, o.Action, o.ID)
	}
	return fmt.Sprintf("%s#%d", o.Type, o.ID)
}

// PowerAction is what POST /servers/{id}/power asks for.
type PowerAction string

const (
	PowerOn       PowerAction = "on"
	PowerShutdown PowerAction = "shutdown"
	PowerOff      PowerAction = "off"
	PowerReboot   PowerAction = "reboot"
	PowerReset    PowerAction = "reset"
)

// PowerActions lists the actions in the order of docs/api.md, Tokens and scopes.
var PowerActions = []PowerAction{PowerOn, PowerShutdown, PowerOff, PowerReboot, PowerReset}

// Transition returns the transient status a power action moves a server in status
// from into, or ok=false when the action does not fit that status.
func (a PowerAction) Transition(from Status) (to Status, ok bool) {
	switch a {
	case PowerOn:
		return StatusStarting, from == StatusStopped
	case PowerShutdown, PowerOff, PowerReboot:
		return StatusStopping, from == StatusRunning
	case PowerReset:
		return StatusStarting, from == StatusRunning
	}
	return "", false
}

// TxType is the type of a ledger entry.
type TxType string

const (
	TxTopup      TxType = "topup"
	TxCharge     TxType = "charge"
	TxRefund     TxType = "refund"
	TxAdjustment TxType = "adjustment"
)

// Transaction is an entry of an account's append-only ledger.
type Transaction struct {
	ID           int64
	AccountID    int64
	Type         TxType
	Amount       Money
	BalanceAfter Money
	Description  string
	ResourceType string
	ResourceID   *int64
	// ResourceName is the name of the resource when the entry was written.
	ResourceName string
	// PeriodStart is the hour a charge pays for (nil for other entries).
	PeriodStart *time.Time
	CreatedAt   time.Time
}

// SnapshotStatus is where a snapshot stands.
type SnapshotStatus string

const (
	SnapshotCreating  SnapshotStatus = "creating"
	SnapshotAvailable SnapshotStatus = "available"
	SnapshotDeleting  SnapshotStatus = "deleting"
)

// Snapshot is a saved state of a server's disk, and of its memory when IncludeMemory.
type Snapshot struct {
	ID            int64
	AccountID     int64
	ServerID      int64
	Name          string
	IncludeMemory bool
	// SizeGB is what the snapshot takes, known once it is available (0 before).
	SizeGB int
	Status SnapshotStatus
	// DeleteScheduled: its deletion waits for the server's current operation to end.
	DeleteScheduled bool
	CreatedAt       time.Time
	DeletedAt       *time.Time
}

// DriverName is the name the compute driver knows the snapshot by: stable, and
// independent of the name its owner chose.
func (s *Snapshot) DriverName() string { return fmt.Sprintf("snap-%d", s.ID) }

// IdempotencyState is what a record of an Idempotency-Key holds.
type IdempotencyState string

const (
	// IdempotencyDone: the request's answer, stored for replays (in the same
	// transaction as the request's change, when it made one).
	IdempotencyDone IdempotencyState = "done"
	// IdempotencyApplied is left by Berth before 2026-11-25, which stored a request's
	// answer after its change: "applied" means the change committed and the answer
	// was lost in a crash. No new record is written so; such a record expires after
	// 24 hours like any other.
	IdempotencyApplied IdempotencyState = "applied"
)

// IdempotencyRecord is what Berth keeps of a request sent with an Idempotency-Key.
type IdempotencyRecord struct {
	ID          int64
	AccountID   int64
	Key         string
	RequestHash []byte
	State       IdempotencyState
	Status      int
	ContentType string
	Body        []byte
	CreatedAt   time.Time
}

// AuditEntry is one state-changing request, through the API or by an operator.
type AuditEntry struct {
	ID             int64
	At             time.Time
	Actor          string // "api" or "operator"
	AccountID      *int64
	TokenID        *int64
	Action         string
	Target         string
	Status         int
	Code           string
	Client         string
	IdempotencyKey string
	Replayed       bool
}
