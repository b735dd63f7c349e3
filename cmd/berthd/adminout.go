package main

import (
	"strings"
	"time"

	"github.com/berthhq/berth/internal/compute/libvirtdriver"
	"github.com/berthhq/berth/internal/hosting"
)

// This file holds what the admin commands print, one JSON object each: scripts read
// it (README, "Operate it"), and testdata/admin_*.golden hold each command's keys and
// the types of their values. The fields of each type stand in the order of their
// JSON names, the order the commands have always printed them in.

// accountOut is an account; CreatedAt only in account list.
type accountOut struct {
	Blocked   bool           `json:"blocked"`
	CreatedAt *time.Time     `json:"created_at,omitempty"`
	Credit    string         `json:"credit"`
	Currency  string         `json:"currency"`
	Email     string         `json:"email"`
	ID        int64          `json:"id"`
	Language  string         `json:"language"`
	Name      string         `json:"name"`
	Quotas    map[string]int `json:"quotas"`
}

func accountOf(a hosting.Account) accountOut {
	return accountOut{Blocked: a.Blocked, Credit: a.Credit.String(), Currency: a.Currency, Email: a.Email, ID: a.ID,
		Language: a.Language, Name: a.Name, Quotas: quotasOf(a.Quotas)}
}

// quotasOf is an account's quotas by their flags' names, with _ for -.
func quotasOf(q hosting.Quotas) map[string]int {
	out := map[string]int{}
	for _, k := range hosting.QuotaKinds {
		out[strings.ReplaceAll(k.Flag, "-", "_")] = *k.Of(&q)
	}
	return out
}

// auditedAccount is an output that names the account its command acted on, for the
// audit log when no --account named it (a token revoked by its id, a server
// suspended).
type auditedAccount interface{ auditAccount() int64 }

// tokenCreated is a new token, with its secret (shown this once).
type tokenCreated struct {
	AccountID int64          `json:"account_id"`
	ExpiresAt *time.Time     `json:"expires_at"`
	ID        int64          `json:"id"`
	Name      string         `json:"name"`
	Scopes    hosting.Scopes `json:"scopes"`
	Token     string         `json:"token"`
}

type tokenRevoked struct {
	AccountID int64      `json:"account_id"`
	ID        int64      `json:"id"`
	Name      string     `json:"name"`
	RevokedAt *time.Time `json:"revoked_at"`
}

func (t tokenRevoked) auditAccount() int64 { return t.AccountID }

// tokenListed is a token in token list: never its secret or hash.
type tokenListed struct {
	CreatedAt  time.Time      `json:"created_at"`
	ExpiresAt  *time.Time     `json:"expires_at"`
	ID         int64          `json:"id"`
	LastUsedAt *time.Time     `json:"last_used_at"`
	Name       string         `json:"name"`
	RevokedAt  *time.Time     `json:"revoked_at"`
	Scopes     hosting.Scopes `json:"scopes"`
}

type creditAdded struct {
	AccountID     int64  `json:"account_id"`
	Amount        string `json:"amount"`
	Credit        string `json:"credit"`
	Description   string `json:"description"`
	TransactionID int64  `json:"transaction_id"`
}

// budgetSet is an account's budget; Budget null: none.
type budgetSet struct {
	AccountID int64   `json:"account_id"`
	Budget    *string `json:"budget"`
	Currency  string  `json:"currency"`
}

type metered struct {
	Charged           string `json:"charged"`
	Hours             int    `json:"hours"`
	OverdrawnAccounts int    `json:"overdrawn_accounts"`
	TookMS            int64  `json:"took_ms"`
}

type serverOut struct {
	AccountID           int64          `json:"account_id"`
	ID                  int64          `json:"id"`
	Name                string         `json:"name"`
	Status              hosting.Status `json:"status"`
	Suspended           bool           `json:"suspended"`
	SuspendedByOperator bool           `json:"suspended_by_operator"`
	SuspendedForCredit  bool           `json:"suspended_for_credit"`
}

func (s serverOut) auditAccount() int64 { return s.AccountID }

type catalogApplied struct {
	Applied   string `json:"applied"`
	Apps      int    `json:"apps"`
	Images    int    `json:"images"`
	Licenses  int    `json:"licenses"`
	Locations int    `json:"locations"`
	Plans     int    `json:"plans"`
}

type auditEntry struct {
	AccountID      *int64 `json:"account_id"`
	Action         string `json:"action"`
	Actor          string `json:"actor"`
	At             string `json:"at"`
	Client         string `json:"client"`
	Code           string `json:"code"`
	ID             int64  `json:"id"`
	IdempotencyKey string `json:"idempotency_key"`
	Replayed       bool   `json:"replayed"`
	Status         int    `json:"status"`
	Target         string `json:"target"`
	TokenID        *int64 `json:"token_id"`
}

// storeCopied is what admin store copy copied: rows by table, jobs by kind.
type storeCopied struct {
	Copied map[string]int `json:"copied"`
	From   string         `json:"from"`
	Jobs   map[string]int `json:"jobs"`
	To     string         `json:"to"`
}

// hostOut is a libvirt host: accel is what
// its guests run with (kvm or tcg), accel_mode what was asked when it was added (auto,
// kvm, tcg); accel_note, from host add and host accel only, why KVM is not used or is
// doubted.
type hostOut struct {
	Accel        string `json:"accel"`
	AccelMode    string `json:"accel_mode"`
	AccelNote    string `json:"accel_note,omitempty"`
	Bridge       string `json:"bridge"`
	ConsoleDir   string `json:"console_dir"`
	DiskGB       int    `json:"disk_gb"`
	Draining     bool   `json:"draining"`
	ID           int64  `json:"id"`
	LocationID   int64  `json:"location_id"`
	Machines     int    `json:"machines"`
	MemoryMB     int    `json:"memory_mb"`
	Pool         string `json:"pool"`
	URI          string `json:"uri"`
	UsedDiskGB   int    `json:"used_disk_gb"`
	UsedMemoryMB int    `json:"used_memory_mb"`
	UsedVCPUs    int    `json:"used_vcpus"`
	VCPUs        int    `json:"vcpus"`
}

func hostOf(h libvirtdriver.Host) hostOut {
	return hostOut{Accel: h.Accel, AccelMode: h.AccelMode, AccelNote: h.AccelNote, Bridge: h.Bridge, ConsoleDir: h.ConsoleDir,
		DiskGB: h.DiskGB, Draining: h.Draining, ID: h.ID, LocationID: h.LocationID, Machines: h.Machines, MemoryMB: h.MemoryMB,
		Pool: h.Pool, URI: h.URI, UsedDiskGB: h.UsedDisk, UsedMemoryMB: h.UsedMemoryMB, UsedVCPUs: h.UsedVCPUs, VCPUs: h.VCPUs}
}

type imageImported struct {
	File       string        `json:"file"`
	Hosts      []imageOnHost `json:"hosts"`
	ImageID    int64         `json:"image_id"`
	LocationID int64         `json:"location_id"`
	SHA256     string        `json:"sha256"`
}

type imageOnHost struct {
	HostID int64  `json:"host_id"`
	Path   string `json:"path"`
	Volume string `json:"volume"`
}

type poolOut struct {
	CIDR       string   `json:"cidr"`
	DNS        []string `json:"dns"`
	First      string   `json:"first"`
	Gateway    string   `json:"gateway"`
	ID         int64    `json:"id"`
	IPv6Prefix string   `json:"ipv6_prefix"`
	Last       string   `json:"last"`
	LocationID int64    `json:"location_id"`
	Size       int      `json:"size"`
	Used       int      `json:"used"`
}

func poolOf(p libvirtdriver.Pool) poolOut {
	return poolOut{CIDR: p.CIDR, DNS: p.DNS, First: p.First, Gateway: p.Gateway, ID: p.ID, IPv6Prefix: p.IPv6Prefix,
		Last: p.Last, LocationID: p.LocationID, Size: p.Size, Used: p.Used}
}

// volumePoolOut is a location's volume pool: type, from volume-pool set only, is the
// pool's libvirt type (dir, netfs, rbd, ...).
type volumePoolOut struct {
	LocationID int64     `json:"location_id"`
	Pool       string    `json:"pool"`
	SetAt      time.Time `json:"set_at"`
	Type       string    `json:"type,omitempty"`
	Volumes    int       `json:"volumes"`
}

func volumePoolOf(p libvirtdriver.VolumePool) volumePoolOut {
	return volumePoolOut{LocationID: p.LocationID, Pool: p.Pool, SetAt: p.SetAt, Type: p.Type, Volumes: p.Volumes}
}

// licenseKeysOut is what admin license keys add and list print: the pool's keys and
// those free (Added: how many the command added).
type licenseKeysOut struct {
	License int64  `json:"license"`
	Name    string `json:"name"`
	Added   *int   `json:"added,omitempty"`
	Keys    int    `json:"keys"`
	Free    int    `json:"free"`
}
