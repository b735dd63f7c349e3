// Package api holds the wire types of Berth's /v1 API: the JSON shapes of requests
// and responses, exactly as api/openapi.yaml describes them. It depends only on the
// standard library so that clients can import it.
package api

import (
	"bytes"
	"encoding/json"
	"time"
)

// One wraps a single object: {"data": {...}}.
type One[T any] struct {
	Data T `json:"data"`
}

// List wraps a list: {"data": [...]}.
type List[T any] struct {
	Data []T `json:"data"`
}

// Error is every error body (docs/api.md, Errors).
type Error struct {
	Message   string              `json:"message"`
	Code      string              `json:"code"`
	Errors    map[string][]string `json:"errors,omitempty"`
	Operation *OperationRef       `json:"operation,omitempty"`
}

// Nullable is a request field that distinguishes absent, null and a value. Its zero
// value is absent: a field tagged omitzero is then left out of the JSON a client
// sends. Build the other two with Some and Null.
type Nullable[T any] struct {
	Set   bool // the field was present
	Null  bool // the field was present and null
	Value T
}

// Some is a Nullable holding v.
func Some[T any](v T) Nullable[T] { return Nullable[T]{Set: true, Value: v} }

// Null is a Nullable that is present and null (e.g. project_id: null unassigns).
func Null[T any]() Nullable[T] { return Nullable[T]{Set: true, Null: true} }

// IsZero reports whether the field is absent, for encoding/json's omitzero.
func (n Nullable[T]) IsZero() bool { return !n.Set }

// MarshalJSON writes null or the value. An absent field must be left out with
// omitzero; written anyway, it is null.
func (n Nullable[T]) MarshalJSON() ([]byte, error) {
	if !n.Set || n.Null {
		return []byte("null"), nil
	}
	return json.Marshal(n.Value)
}

// UnmarshalJSON records presence and nullness.
func (n *Nullable[T]) UnmarshalJSON(b []byte) error {
	n.Set = true
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		n.Null = true
		return nil
	}
	return json.Unmarshal(b, &n.Value)
}

// TokenInfo is the token part of GET /me.
type TokenInfo struct {
	ID        int64      `json:"id"`
	Name      string     `json:"name"`
	ExpiresAt *time.Time `json:"expires_at"`
}

// Me is GET /me.
type Me struct {
	ID       int64     `json:"id"`
	Email    string    `json:"email"`
	Name     string    `json:"name"`
	Language string    `json:"language"`
	Currency string    `json:"currency"`
	Credit   string    `json:"credit"`
	Blocked  bool      `json:"blocked"`
	Scopes   []string  `json:"scopes"`
	Token    TokenInfo `json:"token"`
}

// MeUpdate is the body of PATCH /me; a field left out keeps its value.
type MeUpdate struct {
	// Language is the language of messages: en, de or fr.
	Language *string `json:"language,omitempty"`
}

// Plan is a server size with money strings.
type Plan struct {
	ID           int64  `json:"id"`
	Name         string `json:"name"`
	VCPUs        int    `json:"vcpus"`
	MemoryMB     int    `json:"memory_mb"`
	DiskGB       int    `json:"disk_gb"`
	PriceHourly  string `json:"price_hourly"`
	PriceMonthly string `json:"price_monthly"`
	// Limits on a server's throughput; absent: none. NetworkMbps caps each direction
	// of its network in megabits per second; DiskIOPS its disk's operations per second
	// and DiskMBps its disk's megabytes (10^6 bytes) per second, reads and writes
	// together.
	NetworkMbps *int `json:"network_mbps,omitempty"`
	DiskIOPS    *int `json:"disk_iops,omitempty"`
	DiskMBps    *int `json:"disk_mbps,omitempty"`
	InStock     bool `json:"in_stock"`
}

// Image is an operating-system image.
type Image struct {
	ID      int64  `json:"id"`
	Name    string `json:"name"`
	OS      string `json:"os"`
	Version string `json:"version"`
}

// Location is GET /locations' item.
type Location struct {
	ID                  int64  `json:"id"`
	Name                string `json:"name"`
	City                string `json:"city"`
	Country             string `json:"country"`
	SnapshotPriceGBHour string `json:"snapshot_price_gb_hour"`
	// VolumePriceGBHour and VolumePriceGBMonth are null where no volumes are sold.
	VolumePriceGBHour  *string `json:"volume_price_gb_hour"`
	VolumePriceGBMonth *string `json:"volume_price_gb_month"`
	Plans              []Plan  `json:"plans"`
	Images             []Image `json:"images"`
}

// App is a one-click application.
type App struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Version     string `json:"version"`
}

// OperationRef is the operation a server is busy with.
type OperationRef struct {
	ID        int64     `json:"id"`
	Type      string    `json:"type"`
	StartedAt time.Time `json:"started_at"`
}

// Operation is GET /operations/{id}.
type Operation struct {
	ID   int64  `json:"id"`
	Type string `json:"type"`
	// ServerID is null for a volume's operation that concerns no server.
	ServerID *int64 `json:"server_id"`
	// VolumeID names the volume of a volume's operation (null for the others).
	VolumeID   *int64     `json:"volume_id"`
	Status     string     `json:"status"`
	Error      *string    `json:"error"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
}

// Server is a server record.
type Server struct {
	ID          int64         `json:"id"`
	Name        string        `json:"name"`
	DisplayName string        `json:"display_name"`
	ProjectID   *int64        `json:"project_id"`
	Status      string        `json:"status"`
	Operation   *OperationRef `json:"operation"`
	LocationID  int64         `json:"location_id"`
	PlanID      int64         `json:"plan_id"`
	ImageID     int64         `json:"image_id"`
	AppID       *int64        `json:"app_id"`
	RecipeID    *int64        `json:"recipe_id"`
	VCPUs       int           `json:"vcpus"`
	MemoryMB    int           `json:"memory_mb"`
	DiskGB      int           `json:"disk_gb"`
	IPv4        *string       `json:"ipv4"`
	IPv6        *string       `json:"ipv6"`
	SSHKeyIDs   []int64       `json:"ssh_key_ids"`
	CreatedAt   time.Time     `json:"created_at"`
}

// ServerCreate is the body of POST /servers.
type ServerCreate struct {
	PlanID       *int64          `json:"plan_id,omitempty"`
	LocationID   *int64          `json:"location_id,omitempty"`
	ImageID      *int64          `json:"image_id,omitempty"`
	SSHKeyIDs    []int64         `json:"ssh_key_ids,omitempty"`
	DisplayName  *string         `json:"display_name,omitempty"`
	ProjectID    Nullable[int64] `json:"project_id,omitzero"`
	AppID        *int64          `json:"app_id,omitempty"`
	RecipeID     *int64          `json:"recipe_id,omitempty"`
	RootPassword *string         `json:"root_password,omitempty"`
	// VolumeIDs are detached volumes attached once the server is made; Automount
	// has the guest mount the formatted ones.
	VolumeIDs []int64 `json:"volume_ids,omitempty"`
	Automount *bool   `json:"automount,omitempty"`
	// LicenseIDs are license products the server holds from its order, beside
	// those its image requires (scope licenses too).
	LicenseIDs []int64 `json:"license_ids,omitempty"`
}

// ServerUpdate is the body of PATCH /servers/{id}.
type ServerUpdate struct {
	DisplayName *string         `json:"display_name,omitempty"`
	ProjectID   Nullable[int64] `json:"project_id,omitzero"`
}

// PowerRequest is the body of POST /servers/{id}/power.
type PowerRequest struct {
	Action *string `json:"action,omitempty"`
}

// SSHKey is a stored public key.
type SSHKey struct {
	ID          int64     `json:"id"`
	Name        string    `json:"name"`
	PublicKey   string    `json:"public_key"`
	Fingerprint string    `json:"fingerprint"`
	CreatedAt   time.Time `json:"created_at"`
}

// SSHKeyCreate is the body of POST /ssh-keys.
type SSHKeyCreate struct {
	Name      *string `json:"name,omitempty"`
	PublicKey *string `json:"public_key,omitempty"`
}

// Project is a server folder.
type Project struct {
	ID          int64     `json:"id"`
	Name        string    `json:"name"`
	ServerCount int       `json:"server_count"`
	CreatedAt   time.Time `json:"created_at"`
}

// ProjectWrite is the body of POST and PATCH /projects.
type ProjectWrite struct {
	Name *string `json:"name,omitempty"`
}

// Recipe is a first-boot script.
type Recipe struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	Script    string    `json:"script"`
	CreatedAt time.Time `json:"created_at"`
}

// RecipeWrite is the body of POST and PATCH /recipes.
type RecipeWrite struct {
	Name   *string `json:"name,omitempty"`
	Script *string `json:"script,omitempty"`
}

// Snapshot is a saved state of a server.
type Snapshot struct {
	ID            int64     `json:"id"`
	ServerID      int64     `json:"server_id"`
	Name          string    `json:"name"`
	IncludeMemory bool      `json:"include_memory"`
	SizeGB        int       `json:"size_gb"`
	Status        string    `json:"status"`
	CreatedAt     time.Time `json:"created_at"`
}

// SnapshotCreate is the body of POST /servers/{id}/snapshots.
type SnapshotCreate struct {
	Name          *string `json:"name,omitempty"`
	IncludeMemory *bool   `json:"include_memory,omitempty"`
}

// SnapshotDeletion answers DELETE /servers/{id}/snapshots/{snapshot}.
type SnapshotDeletion struct {
	Result string `json:"result"` // deleted or scheduled
}

// ReinstallRequest is the body of POST /servers/{id}/reinstall.
type ReinstallRequest struct {
	ImageID *int64 `json:"image_id,omitempty"`
}

// RescaleRequest is the body of POST /servers/{id}/rescale.
type RescaleRequest struct {
	PlanID      *int64 `json:"plan_id,omitempty"`
	UpgradeDisk *bool  `json:"upgrade_disk,omitempty"`
}

// RescaleOption is a plan a server can move to.
type RescaleOption struct {
	Plan
	DiskOK bool `json:"disk_ok"`
}

// Billing is GET /billing (docs/api.md, Billing).
type Billing struct {
	Credit      string  `json:"credit"`
	Currency    string  `json:"currency"`
	HourlyBurn  string  `json:"hourly_burn"`
	MonthlyBurn string  `json:"monthly_burn"`
	DaysLeft    *int64  `json:"days_left"`
	MonthToDate string  `json:"month_to_date"`
	Budget      *string `json:"budget"`
}

// Transaction is an entry of the ledger.
type Transaction struct {
	ID           int64        `json:"id"`
	Type         string       `json:"type"`
	Amount       string       `json:"amount"`
	BalanceAfter string       `json:"balance_after"`
	Description  string       `json:"description"`
	Resource     *ResourceRef `json:"resource"`
	PeriodStart  *time.Time   `json:"period_start"`
	CreatedAt    time.Time    `json:"created_at"`
}

// ResourceRef names what a ledger entry is about.
type ResourceRef struct {
	Type string `json:"type"`
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// Page is a paginated list (Laravel style).
type Page[T any] struct {
	Data  []T       `json:"data"`
	Links PageLinks `json:"links"`
	Meta  PageMeta  `json:"meta"`
}

// PageLinks are absolute URLs, or null where there is no such page.
type PageLinks struct {
	First string  `json:"first"`
	Last  string  `json:"last"`
	Prev  *string `json:"prev"`
	Next  *string `json:"next"`
}

// PageMeta describes a page; From and To are null on an empty page.
type PageMeta struct {
	CurrentPage int    `json:"current_page"`
	From        *int   `json:"from"`
	LastPage    int    `json:"last_page"`
	Path        string `json:"path"`
	PerPage     int    `json:"per_page"`
	To          *int   `json:"to"`
	Total       int    `json:"total"`
}

// ConsoleTicket is POST /servers/{id}/console: where to open the server's serial
// console (a WebSocket URL carrying a one-use ticket) and until when.
type ConsoleTicket struct {
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Event says that something of the account changed (GET /events). Data is the
// object of its type's family (api/openapi.yaml, Event); RequestID names the API
// request that caused it, null when none did (a job, the operator).
type Event struct {
	ID        int64           `json:"id"`
	Type      string          `json:"type"`
	Resource  EventResource   `json:"resource"`
	Data      json.RawMessage `json:"data"`
	RequestID *string         `json:"request_id"`
	CreatedAt time.Time       `json:"created_at"`
}

// EventResource names what an event is about.
type EventResource struct {
	Type string `json:"type"`
	ID   int64  `json:"id"`
}

// EventList is a batch of events, oldest first: {"data": [...], "meta": {...}}.
type EventList struct {
	Data []Event       `json:"data"`
	Meta EventListMeta `json:"meta"`
}

// EventListMeta tells how to go on: NextAfter is the cursor for the next call (the
// last event's id, or the after given when there were none), HasMore that more
// events were ready than the limit let through.
type EventListMeta struct {
	NextAfter int64 `json:"next_after"`
	HasMore   bool  `json:"has_more"`
}

// Webhook is where the account's events are sent (docs/webhooks.md). Secret is only
// in the answers of its creation and of a rotation of its secret.
type Webhook struct {
	ID             int64     `json:"id"`
	URL            string    `json:"url"`
	EventTypes     []string  `json:"event_types"`
	Enabled        bool      `json:"enabled"`
	DisabledReason *string   `json:"disabled_reason"`
	CreatedAt      time.Time `json:"created_at"`
	Secret         string    `json:"secret,omitempty"`
}

// WebhookWrite is POST /webhooks (url required) and PATCH /webhooks/{id}.
type WebhookWrite struct {
	URL        *string   `json:"url,omitempty"`
	EventTypes *[]string `json:"event_types,omitempty"`
	Enabled    *bool     `json:"enabled,omitempty"`
}

// WebhookDelivery is one event sent to one webhook, with its attempts.
type WebhookDelivery struct {
	ID            int64            `json:"id"`
	WebhookID     int64            `json:"webhook_id"`
	EventID       int64            `json:"event_id"`
	EventType     string           `json:"event_type"`
	State         string           `json:"state"`
	AttemptCount  int              `json:"attempt_count"`
	NextAttemptAt *time.Time       `json:"next_attempt_at"`
	CreatedAt     time.Time        `json:"created_at"`
	Attempts      []WebhookAttempt `json:"attempts"`
}

// WebhookAttempt is one attempt of a delivery: Status null when no answer came.
type WebhookAttempt struct {
	At        time.Time `json:"at"`
	Status    *int      `json:"status"`
	LatencyMS int64     `json:"latency_ms"`
	Answer    string    `json:"answer"`
	Reason    *string   `json:"reason"`
}

// Volume is a block volume (docs/api.md, Volumes).
type Volume struct {
	ID          int64         `json:"id"`
	Name        string        `json:"name"`
	SizeGB      int           `json:"size_gb"`
	LocationID  int64         `json:"location_id"`
	ProjectID   *int64        `json:"project_id"`
	ServerID    *int64        `json:"server_id"`
	Format      *string       `json:"format"`
	Status      string        `json:"status"`
	Operation   *OperationRef `json:"operation"`
	LinuxDevice string        `json:"linux_device"`
	CreatedAt   time.Time     `json:"created_at"`
}

// VolumeCreate is the body of POST /volumes: location_id or server_id (then the
// server's location, attached once made).
type VolumeCreate struct {
	Name       *string         `json:"name,omitempty"`
	SizeGB     *int64          `json:"size_gb,omitempty"`
	LocationID *int64          `json:"location_id,omitempty"`
	ServerID   *int64          `json:"server_id,omitempty"`
	ProjectID  Nullable[int64] `json:"project_id,omitzero"`
	Format     *string         `json:"format,omitempty"`
	Automount  *bool           `json:"automount,omitempty"`
}

// VolumeUpdate is the body of PATCH /volumes/{id}.
type VolumeUpdate struct {
	Name      *string         `json:"name,omitempty"`
	ProjectID Nullable[int64] `json:"project_id,omitzero"`
}

// VolumeAttach is the body of POST /volumes/{id}/attach.
type VolumeAttach struct {
	ServerID  *int64 `json:"server_id,omitempty"`
	Automount *bool  `json:"automount,omitempty"`
}

// VolumeResize is the body of POST /volumes/{id}/resize.
type VolumeResize struct {
	SizeGB *int64 `json:"size_gb,omitempty"`
}

// Domain is a zone the account's DNS is hosted in (docs/api.md, Domains).
type Domain struct {
	ID          int64     `json:"id"`
	Name        string    `json:"name"`
	TTL         int       `json:"ttl"`
	Serial      uint32    `json:"serial"`
	Nameservers []string  `json:"nameservers"`
	RRsetCount  int       `json:"rrset_count"`
	CreatedAt   time.Time `json:"created_at"`
}

// DomainCreate is the body of POST /domains.
type DomainCreate struct {
	Name     *string `json:"name,omitempty"`
	TTL      *int64  `json:"ttl,omitempty"`
	ZoneFile *string `json:"zone_file,omitempty"`
}

// DomainUpdate is the body of PATCH /domains/{id}.
type DomainUpdate struct {
	TTL *int64 `json:"ttl,omitempty"`
}

// DNSRecord is one record of an RRset: its value, canonical, and the account's note.
type DNSRecord struct {
	Value   string `json:"value"`
	Comment string `json:"comment"`
}

// RRset is every record of one name and one type of a zone; TTL null is the zone's.
type RRset struct {
	Name    string      `json:"name"`
	Type    string      `json:"type"`
	TTL     *int        `json:"ttl"`
	Records []DNSRecord `json:"records"`
}

// DNSRecordInput is a record as PUT /domains/{id}/rrsets/{name}/{type} takes it.
type DNSRecordInput struct {
	Value   *string `json:"value,omitempty"`
	Comment *string `json:"comment,omitempty"`
}

// RRsetPut is the body of PUT /domains/{id}/rrsets/{name}/{type}: the whole set.
type RRsetPut struct {
	TTL     Nullable[int64]  `json:"ttl,omitzero"`
	Records []DNSRecordInput `json:"records"`
}

// RDNS is the PTR of one of a server's addresses.
type RDNS struct {
	IP  string `json:"ip"`
	PTR string `json:"ptr"`
}

// RDNSSet is the body of PUT /servers/{id}/rdns; PTR null is the default.
type RDNSSet struct {
	IP  *string          `json:"ip,omitempty"`
	PTR Nullable[string] `json:"ptr,omitzero"`
}

// License is a license product of the catalog (docs/api.md, Licenses).
type License struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	Vendor string `json:"vendor"`
	// Per is "server" or "vcpu": what PriceMonthly is for.
	Per          string  `json:"per"`
	PriceMonthly string  `json:"price_monthly"`
	ImageIDs     []int64 `json:"image_ids"`
	InStock      bool    `json:"in_stock"`
}

// ServerLicense is a license a server holds, or held until its paid month ends.
type ServerLicense struct {
	ID          int64     `json:"id"`
	LicenseID   int64     `json:"license_id"`
	Status      string    `json:"status"`
	Key         *string   `json:"key"`
	StartedAt   time.Time `json:"started_at"`
	PaidThrough time.Time `json:"paid_through"`
}

// ServerLicenseCreate is the body of POST /servers/{id}/licenses.
type ServerLicenseCreate struct {
	LicenseID *int64 `json:"license_id,omitempty"`
}

// TicketCreate is the body of POST /tickets.
type TicketCreate struct {
	Subject       *string         `json:"subject,omitempty"`
	Body          *string         `json:"body,omitempty"`
	Priority      *string         `json:"priority,omitempty"`
	ServerID      Nullable[int64] `json:"server_id,omitzero"`
	AttachmentIDs []int64         `json:"attachment_ids,omitempty"`
}

// TicketMessageCreate is the body of POST /tickets/{id}/messages.
type TicketMessageCreate struct {
	Body          *string `json:"body,omitempty"`
	AttachmentIDs []int64 `json:"attachment_ids,omitempty"`
}

// Ticket is a support ticket; Messages only when one ticket is answered (not in the
// list).
type Ticket struct {
	ID        int64           `json:"id"`
	Subject   string          `json:"subject"`
	Status    string          `json:"status"`
	Priority  string          `json:"priority"`
	ServerID  *int64          `json:"server_id"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
	ClosedAt  *time.Time      `json:"closed_at"`
	Messages  []TicketMessage `json:"messages,omitempty"`
}

// TicketMessage is a message of a ticket as its account sees it.
type TicketMessage struct {
	ID          int64        `json:"id"`
	Author      string       `json:"author"`
	AuthorName  string       `json:"author_name"`
	Body        string       `json:"body"`
	Attachments []Attachment `json:"attachments"`
	CreatedAt   time.Time    `json:"created_at"`
}

// Attachment describes an uploaded file (POST /attachments, a message's files).
type Attachment struct {
	ID          int64  `json:"id"`
	Filename    string `json:"filename"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
}
