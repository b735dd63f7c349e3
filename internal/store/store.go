// Package store is the seam between Berth's core and its database. Implementations
// live in subpackages (sqlstore: SQLite and, later, PostgreSQL); storetest holds the
// suite every implementation passes.
package store

import (
	"context"
	"database/sql"
	"errors"
	"net/netip"
	"time"

	"github.com/berthhq/berth/internal/dnszone"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/nameserver"
)

// ErrNotFound is returned when a row does not exist (or belongs to another account).
var ErrNotFound = errors.New("store: not found")

// ErrConflict is returned when a unique rule of the schema refuses a write.
var ErrConflict = errors.New("store: conflict")

// ServerFilter narrows a server list.
type ServerFilter struct {
	ProjectID *int64
	Status    *hosting.Status
}

// VolumeFilter narrows a volume list.
type VolumeFilter struct {
	ServerID  *int64
	ProjectID *int64
}

// TicketFilter narrows a ticket list: of one account (0: every account's, the staff
// queue), in one status, of one priority, assigned to one staff account (Assignee;
// Unassigned for those assigned to nobody). Zero values admit any.
type TicketFilter struct {
	AccountID  int64
	Status     hosting.TicketStatus
	Priority   hosting.TicketPriority
	Assignee   int64
	Unassigned bool
}

// OperationFilter narrows an operation list: the operations of one server, of one
// volume, in one status (nil: any).
type OperationFilter struct {
	ServerID *int64
	VolumeID *int64
	Status   *hosting.OpStatus
}

// RRsetFilter narrows a zone's RRsets: one name (relative, canonical), one type (""
// any).
type RRsetFilter struct {
	Name string
	Type dnszone.Type
}

// DNSReader is what a nameserver answers from (docs/operating.md, DNS); every Reader
// is one.
type DNSReader interface {
	EnclosingZone(ctx context.Context, name string) (hosting.Domain, error)
	ServedZone(ctx context.Context, id int64) (nameserver.Zone, error)
	ServerNamed(ctx context.Context, name string) (hosting.Server, error)
	NetHasServer(ctx context.Context, p netip.Prefix) (bool, error)
	AddressName(ctx context.Context, ip netip.Addr) (server, ptr string, err error)
}

var _ DNSReader = Reader(nil)

// Reader reads. On a Store it reads the latest committed state; on a Tx it reads
// inside the transaction.
type Reader interface {
	TokenByHash(ctx context.Context, hash []byte) (hosting.Token, hosting.Account, error)
	Token(ctx context.Context, id int64) (hosting.Token, error)
	Account(ctx context.Context, id int64) (hosting.Account, error)
	AccountByEmail(ctx context.Context, email string) (hosting.Account, error)
	// Accounts lists up to limit accounts, blocked or not, by id, those after the id
	// after (0: from the first).
	Accounts(ctx context.Context, after int64, limit int) ([]hosting.Account, error)
	// Usage counts what an account holds against its quotas at now: live servers and
	// snapshots, SSH keys, projects, recipes, tokens that can still authenticate,
	// live volumes (and their sizes together) and zones.
	Usage(ctx context.Context, accountID int64, now time.Time) (hosting.Quotas, error)
	// CountConsoleSessions counts the serial console sessions of a server, and of its
	// account over all its servers, whose lease runs past at.
	CountConsoleSessions(ctx context.Context, accountID, serverID int64, at time.Time) (onServer, onAccount int, err error)

	Locations(ctx context.Context) ([]hosting.Location, error)
	Location(ctx context.Context, id int64) (hosting.Location, error)
	Plan(ctx context.Context, id int64) (hosting.Plan, error)
	// PlanAny finds a plan by id, sold or retired (what a server was ordered with).
	PlanAny(ctx context.Context, id int64) (hosting.Plan, error)
	Image(ctx context.Context, id int64) (hosting.Image, error)
	App(ctx context.Context, id int64) (hosting.App, error)
	Apps(ctx context.Context) ([]hosting.App, error)
	// ServersOfPlan counts the live servers of a plan at a location, and the rescales
	// to it in progress there (capacity use).
	ServersOfPlan(ctx context.Context, locationID, planID int64) (int, error)

	// Servers lists an account's live servers, oldest first.
	Servers(ctx context.Context, accountID int64, f ServerFilter) ([]hosting.Server, error)
	// Server finds a live server of an account by id or name.
	Server(ctx context.Context, accountID int64, ref hosting.ServerRef) (hosting.Server, error)
	// ServerAny finds a server by id, deleted or not, of any account.
	ServerAny(ctx context.Context, id int64) (hosting.Server, error)
	CountServers(ctx context.Context, accountID int64) (int, error)
	// ServerKeys returns the key copies a server was built with.
	ServerKeys(ctx context.Context, serverID int64) ([]hosting.SSHKey, error)

	SSHKeys(ctx context.Context, accountID int64) ([]hosting.SSHKey, error)
	SSHKey(ctx context.Context, accountID, id int64) (hosting.SSHKey, error)
	Projects(ctx context.Context, accountID int64) ([]hosting.Project, error)
	Project(ctx context.Context, accountID, id int64) (hosting.Project, error)
	Recipes(ctx context.Context, accountID int64) ([]hosting.Recipe, error)
	// RecipesAfter lists at most limit of an account's recipes with ids above after,
	// by id: a page of a list streamed without holding it whole.
	RecipesAfter(ctx context.Context, accountID, after int64, limit int) ([]hosting.Recipe, error)
	// RecipeNames lists an account's recipes by id without their scripts (ScriptSize
	// says how long each is).
	RecipeNames(ctx context.Context, accountID int64) ([]hosting.Recipe, error)
	Recipe(ctx context.Context, accountID, id int64) (hosting.Recipe, error)

	// Snapshots lists a server's live snapshots, newest first.
	Snapshots(ctx context.Context, serverID int64) ([]hosting.Snapshot, error)
	// Snapshot finds a live snapshot of a server.
	Snapshot(ctx context.Context, serverID, id int64) (hosting.Snapshot, error)
	// SnapshotAny finds a snapshot by id, deleted or not.
	SnapshotAny(ctx context.Context, id int64) (hosting.Snapshot, error)
	// Volumes lists an account's live volumes that f admits, oldest first.
	Volumes(ctx context.Context, accountID int64, f VolumeFilter) ([]hosting.Volume, error)
	// Volume finds a live volume of an account by id or name.
	Volume(ctx context.Context, accountID int64, ref hosting.VolumeRef) (hosting.Volume, error)
	// VolumeAny finds a volume by id, deleted or not.
	VolumeAny(ctx context.Context, id int64) (hosting.Volume, error)
	// ServerVolumes lists the live volumes attached to a server.
	ServerVolumes(ctx context.Context, serverID int64) ([]hosting.Volume, error)
	// HeldVolumes lists the live volumes busy with operation op.
	HeldVolumes(ctx context.Context, op int64) ([]hosting.Volume, error)

	// Domains lists an account's zones, oldest first (docs/api.md, Domains).
	Domains(ctx context.Context, accountID int64) ([]hosting.Domain, error)
	// Domain finds an account's zone by id or name; another account's is ErrNotFound.
	Domain(ctx context.Context, accountID int64, ref hosting.DomainRef) (hosting.Domain, error)
	// RRsets lists the RRsets of a zone that f admits, in DNS order: by name as
	// dnszone.CompareNames orders them, then by type. Each keeps its records in the
	// order they were written, with their comments.
	RRsets(ctx context.Context, zoneID int64, f RRsetFilter) ([]dnszone.RRset, error)
	// EnclosingZone finds the zone, of any account, that a nameserver answers name
	// from: the longest of name's suffixes (name itself included) that is a zone.
	// name is taken in any case, with or without its trailing dot; ErrNotFound when
	// no zone holds it.
	EnclosingZone(ctx context.Context, name string) (hosting.Domain, error)
	// ServedZone reads a zone whole as a nameserver serves it, in one statement (its
	// serial and its RRsets agree): RRset names absolute, TTLs resolved to the zone's
	// where the set has none. Nameservers are left empty: they are the operator's
	// (serve --dns-nameservers), the caller's to fill. ErrNotFound when no zone has
	// the id.
	ServedZone(ctx context.Context, id int64) (nameserver.Zone, error)
	// PTRs lists the reverse DNS names set for a server's addresses, IPv4 first,
	// then by address.
	PTRs(ctx context.Context, serverID int64) ([]hosting.PTR, error)
	// ServerNamed finds the live server of any account that has name: a default
	// forward name, <server name>.<default domain> (docs/operating.md, DNS);
	// ErrNotFound when none has it.
	ServerNamed(ctx context.Context, name string) (hosting.Server, error)
	// NetHasServer reports whether a live server has its IPv4 address in p, a /24,
	// or its IPv6 address in p, a /64 (the operator's reverse zones); another p is an
	// error.
	NetHasServer(ctx context.Context, p netip.Prefix) (bool, error)
	// AddressName finds what reverse DNS answers for ip: the name of the live server
	// holding it and the PTR set for it, "" when none is (the server's default name
	// then). A PTR names the address it was set for; without one, ip must be the
	// server's IPv4 or IPv6 address itself. ErrNotFound when no live server holds it.
	AddressName(ctx context.Context, ip netip.Addr) (server, ptr string, err error)
	// NetNames lists what reverse DNS answers in p, a /24 or a /64 as NetHasServer
	// takes: each address in p of a live server, its own (its IPv4 in a /24, its IPv6
	// in a /64) or one it set a PTR for, with the server's name and the PTR ("" for
	// the default name), by address. The operator's reverse zone of p is published
	// whole from it (docs/operating.md, DNS).
	NetNames(ctx context.Context, p netip.Prefix) ([]AddressName, error)
	// ZoneNames lists the names of the zones of every account, by name, at most limit
	// of those after after ("": from the first): a resync's walk of the zones.
	ZoneNames(ctx context.Context, after string, limit int) ([]string, error)
	// LiveServers lists at most limit live servers of every account with ids above
	// after, by id, each with its id, account, name and addresses only: a resync's
	// walk of the operator's zones.
	LiveServers(ctx context.Context, after int64, limit int) ([]hosting.Server, error)

	// Licenses lists the catalog's license products sold now, by id, each with the
	// images that require it and whether a server can take one (InStock).
	Licenses(ctx context.Context) ([]hosting.License, error)
	// License finds a license product sold now.
	License(ctx context.Context, id int64) (hosting.License, error)
	// ServerLicenses lists a server's licenses by id: those held, failed, and those
	// cancelled whose paid month has not ended at at. A held key_pool license has its
	// SealedKey.
	ServerLicenses(ctx context.Context, serverID int64, at time.Time) ([]hosting.ServerLicense, error)
	// LicenseHook is the hook of a webhook license product, sold now or not, with
	// its secrets; nil when the product has none (no longer provisioned by webhook).
	LicenseHook(ctx context.Context, id int64) (*hosting.LicenseHook, error)
	// HookedLicenses lists the held (pending or active) licenses of webhook products
	// of a server when serverID is not 0, else of every server of the account, by id.
	HookedLicenses(ctx context.Context, accountID, serverID int64) ([]hosting.ServerLicense, error)
	// ServerLicense finds a license of a server, whatever its status.
	ServerLicense(ctx context.Context, serverID, id int64) (hosting.ServerLicense, error)
	// LicenseReport lists the licenses held in the calendar month starting at month,
	// by the server's license id, with the most vCPUs each server had in it.
	LicenseReport(ctx context.Context, month time.Time) ([]LicenseUse, error)
	// LicenseKeys counts the keys of a product's pool, and those free.
	LicenseKeys(ctx context.Context, licenseID int64) (total, free int, err error)
	// EarliestLicenseDue is the earliest end of a paid month, at or before upto, of
	// the licenses held (nil: none), of one account's when account is not 0.
	EarliestLicenseDue(ctx context.Context, upto time.Time, account int64) (*time.Time, error)

	// Tickets lists the tickets f admits, latest activity (updated_at) first, without
	// their messages: limit from offset (limit 0: all), and how many match in all.
	Tickets(ctx context.Context, f TicketFilter, limit, offset int) ([]hosting.Ticket, int, error)
	// Ticket finds a ticket of an account (0: of any account), without its messages.
	Ticket(ctx context.Context, accountID, id int64) (hosting.Ticket, error)
	// TicketMessages lists a ticket's messages oldest first, each with its
	// attachments (without their data); staff notes only when notes is true.
	TicketMessages(ctx context.Context, ticketID int64, notes bool) ([]hosting.TicketMessage, error)
	// Attachment finds an attachment with its data that accountID may read: its own,
	// or one of a message that is not a note on one of its tickets (0: any, for
	// staff). Another is ErrNotFound.
	Attachment(ctx context.Context, accountID, id int64) (hosting.Attachment, error)
	// AttachmentsOf lists, without their data, the attachments among ids that
	// accountID uploaded, by id; ids of others are left out.
	AttachmentsOf(ctx context.Context, accountID int64, ids []int64) ([]hosting.Attachment, error)
	// AttachmentBytes is the size of an account's attachments together.
	AttachmentBytes(ctx context.Context, accountID int64) (int64, error)
	// Staff lists the staff accounts by id.
	Staff(ctx context.Context) ([]hosting.Account, error)

	// Operation finds an operation of an account.
	Operation(ctx context.Context, accountID, id int64) (hosting.Operation, error)
	// Operations lists an account's operations, of live and deleted servers alike,
	// newest first: limit from offset (limit 0: all), and how many match in all.
	Operations(ctx context.Context, accountID int64, f OperationFilter, limit, offset int) ([]hosting.Operation, int, error)
	// OperationAny finds an operation by id, of any account (the workers' read).
	OperationAny(ctx context.Context, id int64) (hosting.Operation, error)
	// RunningOperations lists every operation still running, oldest first.
	RunningOperations(ctx context.Context) ([]hosting.Operation, error)
	// OrphanedOperations lists the operations still running that have no job left to
	// carry them out (its job was discarded or cancelled), oldest first.
	OrphanedOperations(ctx context.Context) ([]int64, error)
	// StrandedSnapshotDeletions lists the servers, at most limit, that have a
	// snapshot scheduled for deletion (deleting) but no operation whose end would run
	// it, by id.
	StrandedSnapshotDeletions(ctx context.Context, limit int) ([]int64, error)
	// Transactions lists an account's ledger, newest first: limit entries from offset
	// (limit 0: all), and how many entries there are in all.
	Transactions(ctx context.Context, accountID int64, limit, offset int) ([]hosting.Transaction, int, error)
	// Spent is what an account's charges net of refunds came to for hours starting at
	// or after from.
	Spent(ctx context.Context, accountID int64, from time.Time) (hosting.Money, error)
	// LicensesMonthly is what the account's held licenses (pending or active) will
	// cost at the next first of a month, at their prices and their servers' vCPUs now.
	LicensesMonthly(ctx context.Context, accountID int64) (hosting.Money, error)
	// Charged is what a resource's charges came to, all hours.
	Charged(ctx context.Context, resourceType string, resourceID int64) (hosting.Money, error)

	// Meter finds the latest meter of a resource (its open one, if it has one).
	Meter(ctx context.Context, resourceType string, resourceID int64) (hosting.Meter, error)
	// Meters lists an account's meters that may still charge an hour: open, or
	// stopped after its ChargedTo.
	Meters(ctx context.Context, accountID int64) ([]hosting.Meter, error)
	// ChargedTo is where the metering pass got for an account: each hour of its
	// meters that starts before it is charged (ErrNotFound: no account).
	ChargedTo(ctx context.Context, accountID int64) (time.Time, error)
	// EarliestDue is the start of the earliest hour due to be charged at upto (nil:
	// none), of one account's meters when account is not 0.
	EarliestDue(ctx context.Context, upto time.Time, account int64) (*time.Time, error)

	// IdempotencyKey finds an account's live record of a key.
	IdempotencyKey(ctx context.Context, accountID int64, key string) (hosting.IdempotencyRecord, error)
	// AuditLog lists audit entries, newest first: of one account (0: all), at most
	// limit, with ids below before (0: from the newest).
	AuditLog(ctx context.Context, accountID int64, before int64, limit int) ([]hosting.AuditEntry, error)
	// AccountTokens lists an account's tokens that are not revoked, newest first.
	AccountTokens(ctx context.Context, accountID int64) ([]hosting.Token, error)
	// Tokens lists all of an account's tokens, the revoked ones too, newest first (an
	// operator's audit; AccountTokens is what the account itself sees). An unknown
	// account has none.
	Tokens(ctx context.Context, accountID int64) ([]hosting.Token, error)
	// SessionByHash finds a console session with its account.
	SessionByHash(ctx context.Context, hash []byte) (hosting.Session, hosting.Account, error)
	// PasswordReset finds a password reset by its token's hash (ErrNotFound: none),
	// used or expired as it may be.
	PasswordReset(ctx context.Context, hash []byte) (hosting.PasswordReset, error)
	// DailySpend is what an account's charges net of refunds came to per UTC day, for
	// hours starting at or after from, oldest first; days without any are left out.
	DailySpend(ctx context.Context, accountID int64, from time.Time) ([]hosting.DaySpend, error)
	// Events lists an account's events that f admits, oldest first, or newest first
	// with f.Newest (docs/api.md, Events). f.Limit is the caller's to bound.
	Events(ctx context.Context, accountID int64, f hosting.EventFilter) ([]hosting.Event, error)
	// Event finds one of an account's events.
	Event(ctx context.Context, accountID, id int64) (hosting.Event, error)

	// Webhooks lists an account's webhooks by id (docs/webhooks.md).
	Webhooks(ctx context.Context, accountID int64) ([]hosting.Webhook, error)
	Webhook(ctx context.Context, accountID, id int64) (hosting.Webhook, error)
	// WebhookDeliveries is a page of a webhook's deliveries, newest first, each with
	// its attempts (Log), and how many it has in all.
	WebhookDeliveries(ctx context.Context, accountID, webhookID int64, limit, offset int) ([]hosting.WebhookDelivery, int, error)
	// WebhookDelivery finds one of an account's deliveries, with its attempts.
	WebhookDelivery(ctx context.Context, accountID, id int64) (hosting.WebhookDelivery, error)
	// WebhookDeliveryByID finds a delivery of any account, without its attempts:
	// for the job that attempts it, which knows only its id.
	WebhookDeliveryByID(ctx context.Context, id int64) (hosting.WebhookDelivery, error)
	// ClockOffsets is how far each account's test clock runs ahead of the system
	// clock (the sandbox's, docs/api.md, The sandbox), as hosting.ClockOffset reads what is
	// stored (0 to hosting.MaxClockAhead); accounts on the system clock are left out.
	ClockOffsets(ctx context.Context) (map[int64]time.Duration, error)
}

// ChargeStep is one step of a metering pass (docs/api.md, Billing; issues 29 and
// 34): for accounts with an hour due at Upto, by when it is due, it charges every hour
// of their meters that starts from their ChargedTo to Upto included, each account's
// in rows of the ledger of one UTC day and at most LinesPerRow hours each, written at
// Now, and moves their ChargedTo past Upto.
type ChargeStep struct {
	Upto, Now time.Time
	// Account, when not 0, limits the step to that account (an account whose test
	// clock runs ahead is charged up to its own now).
	Account int64
	// Limit, when not 0, ends the step after the account that takes it to that many
	// meter hours (every account's hours are charged in one step). A pass in steps of
	// a bounded size holds the database's writer for a bounded time, however many
	// meters are due.
	Limit int
}

// LicenseStep is one step of a metering pass over licenses: it charges the calendar
// month starting at Month for every held license paid through Month (Limit of them
// when not 0, by id; of one Account's when not 0), written at Now.
type LicenseStep struct {
	Month, Now time.Time
	Account    int64
	Limit      int
}

// LicenseUse is a license held in a month, for the operator's report: its product,
// server and account, when it started and was cancelled (nil: held still), and the
// most vCPUs its server had that month.
type LicenseUse struct {
	License, Server, Account string
	Started                  time.Time
	Cancelled                *time.Time
	MaxVCPUs                 int
}

// ChargeResult is what a ChargeStep did.
type ChargeResult struct {
	// Accounts is how many accounts it metered (a license step: 0).
	Accounts int
	// Hours is how many meter hours it settled (an hour past the cap is settled at 0).
	Hours int
	// Total is what it charged in all.
	Total hosting.Money
	// Overdrawn lists the accounts it took below zero credit.
	Overdrawn []int64
	// CreditLow lists the accounts it took below hosting.CreditLowDays of their
	// hourly burn, from at or above it; CreditMail those it took below
	// hosting.CreditMailDays.
	CreditLow, CreditMail []int64
}

// AccountReset is what a ResetAccount removed that its caller still needs.
type AccountReset struct {
	// Machines names the servers whose machines may still exist (the live ones, and
	// the deleted ones whose deletion ran since the last reset): the caller removes
	// them from the compute driver.
	Machines []string
	// Volumes names the volumes whose data may still exist (all the account had:
	// a deleted one's removal may not have run yet); the caller removes them too.
	Volumes []string
	// OpeningCredit is the amount of the account's first top-up (0: it had none).
	OpeningCredit hosting.Money
}

// AddressName is one address of a live server that reverse DNS answers
// (Reader.NetNames): PTR is the name set for it, "" when it has the server's default
// name.
type AddressName struct {
	IP     netip.Addr
	Server string
	PTR    string
}

// ErrInsufficientCredit is returned by a debit the account's credit does not cover.
var ErrInsufficientCredit = errors.New("store: insufficient credit")

// Writer changes state. Only a Tx writes.
type Writer interface {
	CreateAccount(ctx context.Context, a hosting.Account) (int64, error)
	SetAccountBlocked(ctx context.Context, id int64, blocked bool) error
	// SetQuotas replaces an account's quotas.
	SetQuotas(ctx context.Context, id int64, q hosting.Quotas) error
	// ResetAccount empties an account for a sandbox reset (docs/api.md, The sandbox): its
	// servers are deleted at once (kept only as deleted rows, so that their names stay
	// used forever, without their reverse DNS names), and its tickets (with their
	// messages and attachments, the attachments it uploaded too), zones (with their
	// RRsets), snapshots, SSH keys, projects, recipes, operations (with
	// their jobs that wait to run), ledger (credit 0), meters, idempotency
	// records and its servers' metrics are gone. The account itself, its tokens,
	// console sessions and audit entries stay. ErrNotFound for no account.
	ResetAccount(ctx context.Context, accountID int64, at time.Time) (AccountReset, error)
	// LockAccount reads an account so that no other transaction changes what it holds
	// until this one ends: a quota check and the write it allows are then one step.
	LockAccount(ctx context.Context, id int64) (hosting.Account, error)
	// AddTransaction appends to the ledger and moves the account's credit by t.Amount;
	// it returns the entry as written (id and balance after).
	AddTransaction(ctx context.Context, t hosting.Transaction) (hosting.Transaction, error)
	// AddCoveredTransaction is AddTransaction for a debit (t.Amount < 0) that must not
	// take the credit below zero: ErrInsufficientCredit, writing nothing, when it would.
	// It holds under concurrency: the check and the write are one statement.
	AddCoveredTransaction(ctx context.Context, t hosting.Transaction) (hosting.Transaction, error)
	// SetBudget sets an account's monthly budget (nil: none).
	SetBudget(ctx context.Context, accountID int64, budget *hosting.Money) error

	// OpenMeter starts a meter (ErrConflict when the resource has an open one); its
	// hours begin at its account's ChargedTo at the earliest.
	OpenMeter(ctx context.Context, m hosting.Meter) (int64, error)
	// RestartMeter charges a resource again from at (its first hour due then), at its
	// latest meter's price (ErrNotFound: it has none).
	RestartMeter(ctx context.Context, resourceType string, resourceID int64, at time.Time) error
	// StopMeter stops charging hours that start at or after at (never those charged
	// already). Stopping twice keeps the first time; a resource without a meter has
	// nothing to stop.
	StopMeter(ctx context.Context, resourceType string, resourceID int64, at time.Time) error
	// SetMeterRate changes the price of a resource's hours not charged yet
	// (ErrNotFound: it has no meter).
	SetMeterRate(ctx context.Context, resourceType string, resourceID int64, rate hosting.Money, cap *hosting.Money) error
	// ChargeDue runs one step of a metering pass.
	ChargeDue(ctx context.Context, step ChargeStep) (ChargeResult, error)

	// ChargeLicenses runs one LicenseStep as set-based SQL (Hours counts the licenses
	// charged).
	ChargeLicenses(ctx context.Context, step LicenseStep) (ChargeResult, error)
	// AddServerLicense writes a license a server holds.
	AddServerLicense(ctx context.Context, l hosting.ServerLicense) (int64, error)
	// TakeLicenseKey gives the server's license serverLicenseID a free key of the
	// pool of licenseID and returns it sealed; ErrNotFound when the pool is empty.
	TakeLicenseKey(ctx context.Context, licenseID, serverLicenseID int64) ([]byte, error)
	// CancelServerLicense cancels a server's license at at and gives its key back to
	// the pool; ErrNotFound when it is cancelled already.
	CancelServerLicense(ctx context.Context, id int64, at time.Time) error
	// SetServerLicenseStatus moves a server's license from status from to to; false
	// when it was not in from (cancelled meanwhile, say).
	SetServerLicenseStatus(ctx context.Context, id int64, from, to hosting.LicenseStatus) (bool, error)
	// SetLicenseVCPUs records how many vCPUs a license's month in course is paid for.
	SetLicenseVCPUs(ctx context.Context, id int64, vcpus int) error
	// RecordLicenseUse records that the licenses ids had a server of vcpus in the
	// calendar month starting at month (the most of the month is kept).
	RecordLicenseUse(ctx context.Context, ids []int64, month time.Time, vcpus int) error
	// AddLicenseKeys adds sealed keys to the pool of a license product.
	AddLicenseKeys(ctx context.Context, licenseID int64, sealed [][]byte, at time.Time) error

	// SaveIdempotencyKey stores the answer of a request sent with an Idempotency-Key
	// (replacing a record of the key created before expired). ErrConflict when a live
	// record of the key exists: another request with the key got there first.
	SaveIdempotencyKey(ctx context.Context, r hosting.IdempotencyRecord, expired time.Time) error
	// PruneIdempotencyKeys removes the records created before before.
	PruneIdempotencyKeys(ctx context.Context, before time.Time) (int, error)
	// AddAuditEntry appends to the audit log.
	AddAuditEntry(ctx context.Context, e hosting.AuditEntry) error

	// SuspendForCredit suspends an account's live servers for exhausted credit and
	// returns those it newly suspended.
	SuspendForCredit(ctx context.Context, accountID int64) ([]int64, error)
	// LiftCreditSuspension lifts that suspension from an account's servers and
	// returns how many it touched.
	LiftCreditSuspension(ctx context.Context, accountID int64) (int, error)

	CreateToken(ctx context.Context, t hosting.Token) (int64, error)
	RevokeToken(ctx context.Context, id int64, at time.Time) error
	TouchToken(ctx context.Context, id int64, at time.Time) error

	ApplyCatalog(ctx context.Context, c hosting.Catalog) error

	CreateSSHKey(ctx context.Context, k hosting.SSHKey) (int64, error)
	DeleteSSHKey(ctx context.Context, accountID, id int64) error
	CreateProject(ctx context.Context, p hosting.Project) (int64, error)
	RenameProject(ctx context.Context, accountID, id int64, name string) error
	// DeleteProject removes a project; its servers become unassigned.
	DeleteProject(ctx context.Context, accountID, id int64) error
	CreateRecipe(ctx context.Context, r hosting.Recipe) (int64, error)
	UpdateRecipe(ctx context.Context, r hosting.Recipe) error
	DeleteRecipe(ctx context.Context, accountID, id int64) error

	// CreateServer writes a server with its key copies and returns its id.
	CreateServer(ctx context.Context, s hosting.Server) (int64, error)
	UpdateServer(ctx context.Context, s hosting.Server) error
	SetServerStatus(ctx context.Context, id int64, status hosting.Status) error
	// SetServerAddresses records a server's addresses; the reverse DNS names of
	// addresses it no longer has (hosting.ServerHasAddress) are removed.
	SetServerAddresses(ctx context.Context, id int64, ipv4, ipv6 string) error
	SetServerSuspended(ctx context.Context, id int64, suspended bool) error
	// DeleteServer removes a server from its owner's view (deleted_at), with the
	// reverse DNS names of its addresses.
	DeleteServer(ctx context.Context, id int64, at time.Time) error

	// CreateSnapshot writes a snapshot; ErrConflict when the server has a live one of
	// the same name (case-insensitively).
	CreateSnapshot(ctx context.Context, s hosting.Snapshot) (int64, error)
	// SnapshotReady records a snapshot's size and makes it available.
	SnapshotReady(ctx context.Context, id int64, sizeGB int) error
	// ScheduleSnapshotDeletion marks a snapshot deleting, to be deleted when its
	// server's current operation ends.
	ScheduleSnapshotDeletion(ctx context.Context, id int64) error
	// ScheduledSnapshotDeletions lists a server's live snapshots scheduled for deletion.
	ScheduledSnapshotDeletions(ctx context.Context, serverID int64) ([]hosting.Snapshot, error)
	// DeleteSnapshot removes a snapshot from its owner's view (deleted_at).
	DeleteSnapshot(ctx context.Context, id int64, at time.Time) error
	// CreateVolume writes a volume; ErrConflict when the account has a live one of
	// the same name.
	CreateVolume(ctx context.Context, v hosting.Volume) (int64, error)
	// UpdateVolume writes a live volume's name and project; ErrConflict as
	// CreateVolume.
	UpdateVolume(ctx context.Context, v hosting.Volume) error
	SetVolumeStatus(ctx context.Context, id int64, status hosting.VolumeStatus) error
	// SetVolumeServer records the server a volume is attached to (nil: detached).
	SetVolumeServer(ctx context.Context, id int64, serverID *int64) error
	SetVolumeSize(ctx context.Context, id int64, sizeGB int) error
	// HoldVolumes makes the volumes ids busy with operation op (a provisioning that
	// attaches them); ErrConflict when one is busy already.
	HoldVolumes(ctx context.Context, ids []int64, op int64) error
	// HoldServerVolumes makes the live volumes attached to a server busy with
	// operation op (its deletion).
	HoldServerVolumes(ctx context.Context, serverID, op int64) error
	// DeleteVolume removes a volume from its owner's view (deleted_at).
	DeleteVolume(ctx context.Context, id int64, at time.Time) error

	// ZoneRelated reports whether a zone of any account is name, a parent of name or
	// a child of it (dnszone.Related): what docs/api.md, Domains, refuses to add. It
	// first waits for the zone creations of other transactions (on PostgreSQL a lock
	// every CreateDomain takes too, held until the transaction ends; SQLite runs one
	// writer at a time), so that the check and the CreateDomain it allows are one
	// step.
	ZoneRelated(ctx context.Context, name string) (bool, error)
	// CreateDomain writes a zone with its first RRsets (a zone file's, or none), its
	// serial hosting.NewZoneSerial of its creation, or above the last serial a deleted
	// zone of that name had when that is greater (a zone's serial only grows under
	// its name: a secondary and PowerDNS would not take a lower one); ErrConflict when a zone of any
	// account has the name.
	CreateDomain(ctx context.Context, d hosting.Domain, sets []dnszone.RRset) (int64, error)
	// LockDomain reads an account's zone so that no other transaction changes it or
	// its RRsets until this one ends: a check of its RRset count and the write it
	// allows are then one step. ErrNotFound as Domain.
	LockDomain(ctx context.Context, accountID int64, ref hosting.DomainRef) (hosting.Domain, error)
	// SetDomainTTL changes a zone's TTL. It and every change of RRsets below raise
	// the zone's serial (hosting.NextZoneSerial at at) in the same transaction.
	// ErrNotFound when no zone has the id.
	SetDomainTTL(ctx context.Context, id int64, ttl int, at time.Time) error
	// DeleteDomain removes a zone with its RRsets; its name is free again.
	DeleteDomain(ctx context.Context, id int64) error
	// PutRRset writes one whole RRset (canonical, dnszone.CanonicalRRset), creating
	// it or replacing the one of its name and type, and says whether it created it.
	PutRRset(ctx context.Context, zoneID int64, set dnszone.RRset, at time.Time) (created bool, err error)
	// DeleteRRset removes the RRset of a name and type; ErrNotFound when there is none.
	DeleteRRset(ctx context.Context, zoneID int64, name string, t dnszone.Type, at time.Time) error
	// ReplaceRRsets replaces every RRset of a zone with sets (a zone file's import).
	ReplaceRRsets(ctx context.Context, zoneID int64, sets []dnszone.RRset, at time.Time) error
	// SetPTR sets the reverse DNS name of one address of a server, replacing the one
	// it had.
	SetPTR(ctx context.Context, p hosting.PTR) error
	// DeletePTR puts an address back on its default name; one without a PTR is no
	// error.
	DeletePTR(ctx context.Context, serverID int64, ip string) error

	// SetServerImage records the image a reinstall wrote.
	SetServerImage(ctx context.Context, id, imageID int64) error
	// SetServerPlan records what a rescale changed.
	SetServerPlan(ctx context.Context, id, planID int64, vcpus, memoryMB, diskGB int) error

	// StartOperation writes a running operation and marks its server (when it has
	// one) and its volume (a volume's operation) busy with it. It answers ErrConflict
	// when either is already busy.
	StartOperation(ctx context.Context, op hosting.Operation) (int64, error)
	// FinishOperation records the end of an operation and frees its server and volume.
	FinishOperation(ctx context.Context, id int64, status hosting.OpStatus, errText string, at time.Time) error

	// Serialize makes this transaction the only one of its name running: another
	// transaction asking for the same name waits until this one ends. A use case
	// that reads what is due and then does it (a metering pass, resuming operations)
	// asks first, so that two processes never both do it. (SQLite runs every write
	// transaction one at a time, so there it has nothing to do.)
	Serialize(ctx context.Context, name string) error

	// SetAccountLanguage sets the language an account reads Berth in.
	SetAccountLanguage(ctx context.Context, id int64, language string) error
	// SetAccountPassword replaces the hash of an account's console password
	// (ErrNotFound when there is no such account).
	SetAccountPassword(ctx context.Context, id int64, hash string) error
	// DeleteSessionsOf removes every console session of an account but the one whose
	// hash is keep (nil: every one).
	DeleteSessionsOf(ctx context.Context, accountID int64, keep []byte) error
	// CreateSession writes a console session.
	CreateSession(ctx context.Context, s hosting.Session) (int64, error)
	// DeleteSession removes a session (signing out); a missing one is no error.
	DeleteSession(ctx context.Context, hash []byte) error
	// DeleteExpiredSessions removes every session expired at at.
	DeleteExpiredSessions(ctx context.Context, at time.Time) error
	// CreateConsoleTicket writes a server console ticket.
	CreateConsoleTicket(ctx context.Context, t hosting.ConsoleTicket) (int64, error)
	// SpendConsoleTicket marks the ticket of hash used at at, when it is neither used
	// nor expired then, and returns it with spent true. One statement does both, so of
	// several processes presenting a ticket at once exactly one spends it. A ticket
	// that exists but cannot be spent is returned as it is, with spent false;
	// ErrNotFound when there is none.
	SpendConsoleTicket(ctx context.Context, hash []byte, at time.Time) (t hosting.ConsoleTicket, spent bool, err error)
	// DeleteConsoleTickets removes the tickets that expired before before.
	DeleteConsoleTickets(ctx context.Context, before time.Time) error
	// CreatePasswordReset writes a password reset (its token's hash).
	CreatePasswordReset(ctx context.Context, r hosting.PasswordReset) (int64, error)
	// SpendPasswordReset marks the reset of hash used at at, when it is neither used
	// nor expired then, and returns it with spent true; every other open reset of its
	// account is spent with it (one link works, the older ones die). One statement
	// spends it, so of several requests presenting it at once exactly one does. A
	// reset that exists but cannot be spent is returned as it is, with spent false;
	// ErrNotFound when there is none.
	SpendPasswordReset(ctx context.Context, hash []byte, at time.Time) (r hosting.PasswordReset, spent bool, err error)
	// DeletePasswordResets removes the resets that expired before before.
	DeletePasswordResets(ctx context.Context, before time.Time) error
	// CreateConsoleSession writes an open serial console session.
	CreateConsoleSession(ctx context.Context, s hosting.ConsoleSession) (int64, error)
	// RenewConsoleSessions moves the lease of the sessions ids on to until; ids that
	// are gone are no error.
	RenewConsoleSessions(ctx context.Context, ids []int64, until time.Time) error
	// DeleteConsoleSessions removes the sessions ids (they ended); ids that are gone
	// are no error.
	DeleteConsoleSessions(ctx context.Context, ids []int64) error
	// DeleteConsoleSessionsOf removes every session of holder (its process stops).
	DeleteConsoleSessionsOf(ctx context.Context, holder string) error
	// DeleteExpiredConsoleSessions removes the sessions whose lease ran out before
	// before.
	DeleteExpiredConsoleSessions(ctx context.Context, before time.Time) error
	// AdvanceClock moves an account's test clock forward by by (> 0, whole
	// milliseconds) unless that would take it past hosting.MaxClockAhead ahead of the
	// system clock, in one statement (of several processes advancing at once, none
	// passes the limit). It returns how far ahead the clock now is and whether it
	// moved; when it did not, nothing changed and ahead is where it stays (an offset
	// stored beyond the limit reads as the limit).
	AdvanceClock(ctx context.Context, accountID int64, by time.Duration) (ahead time.Duration, moved bool, err error)
	// ResetClock puts an account back on the system clock.
	ResetClock(ctx context.Context, accountID int64) error

	// AddEvents appends events and returns them with their ids. An account's events
	// get ids in the order their transactions commit (on PostgreSQL its event writes
	// take turns until commit), so a reader that has seen an id never later finds a
	// smaller one: call it last in a transaction, when nothing else is left to lock
	// (BeforeCommit). Readers waiting on the account's events are told on commit.
	AddEvents(ctx context.Context, events []hosting.Event) ([]hosting.Event, error)
	// PruneEvents removes at most limit of the events created before before, the
	// oldest first, and says how many it removed.
	PruneEvents(ctx context.Context, before time.Time, limit int) (int, error)

	// SetStaff makes an account staff, or no longer (ErrNotFound for no account).
	SetStaff(ctx context.Context, accountID int64, staff bool) error
	// CreateTicket writes a ticket (without messages) and returns its id.
	CreateTicket(ctx context.Context, t hosting.Ticket) (int64, error)
	// UpdateTicket writes a ticket's status, priority, assignee, updated_at and
	// closed_at.
	UpdateTicket(ctx context.Context, t hosting.Ticket) error
	// AddTicketMessage writes a message and has it name the attachments ids, each
	// of which must be uploader's and named by no message yet: ErrConflict when one
	// is not (the caller's transaction is then to roll back).
	AddTicketMessage(ctx context.Context, m hosting.TicketMessage, uploader int64, attachmentIDs []int64) (int64, error)
	// CreateAttachment writes an uploaded attachment, named by no message yet.
	CreateAttachment(ctx context.Context, a hosting.Attachment) (int64, error)
	// DeleteUnattachedAttachments removes at most limit of the attachments no message
	// names that were uploaded before before, and says how many.
	DeleteUnattachedAttachments(ctx context.Context, before time.Time, limit int) (int, error)

	// CreateWebhook stores a webhook and returns its id.
	CreateWebhook(ctx context.Context, w hosting.Webhook) (int64, error)
	// UpdateWebhook writes a webhook's url, event types, state and secrets.
	UpdateWebhook(ctx context.Context, w hosting.Webhook) error
	// DeleteWebhook removes a webhook with its deliveries and their attempts.
	DeleteWebhook(ctx context.Context, accountID, id int64) error
	// AddWebhookDelivery stores a delivery and returns its id.
	AddWebhookDelivery(ctx context.Context, d hosting.WebhookDelivery) (int64, error)
	// UpdateWebhookDelivery writes a delivery's state, attempts and next attempt.
	UpdateWebhookDelivery(ctx context.Context, d hosting.WebhookDelivery) error
	// AddWebhookAttempt records an attempt of a delivery.
	AddWebhookAttempt(ctx context.Context, a hosting.WebhookAttempt) (int64, error)
}

// Tx is a transaction: reads see its own writes; SQL exposes it so a job can be
// enqueued in the same transaction as the state change it carries out (only that:
// the store does not see what is written through it, and a read cache would not
// learn of it).
type Tx interface {
	Reader
	Writer
	SQL() *sql.Tx
	// AfterCommit has fn run once the transaction has committed, in the goroutine
	// that committed it; never when it rolls back or its commit reports an error. It
	// is for telling others what the transaction wrote (a job queue that has work).
	AfterCommit(fn func())
	// BeforeCommit has fn run once fn of InTx has returned nil, just before the
	// transaction commits, in the order given; an error from it rolls the transaction
	// back. A savepoint that fails drops what it had asked. It is for writes that must
	// come last (an account's events, AddEvents).
	BeforeCommit(fn func(ctx context.Context) error)
}

// Store is a database.
type Store interface {
	Reader
	// InTx runs fn in a write transaction, committing when it returns nil.
	InTx(ctx context.Context, fn func(tx Tx) error) error
	// WriteDB is the pool transactions and jobs use. What is written on it outside
	// InTx must be the job queue's or a driver's own tables: the store does not see
	// it (sqlstore's read cache would not learn of a change of servers, operations,
	// tokens or accounts).
	WriteDB() *sql.DB
	// Rebind turns a ? placeholder query into the database's dialect.
	Rebind(q string) string
	Close() error

	// Ready reports whether the database can serve this process: it answers on the
	// pool writes use, and its schema is at least at this build's newest migration (a
	// newer process may have migrated it further). It fails with ErrUnreachable or
	// ErrNotMigrated, wrapping the detail.
	Ready(ctx context.Context) error
	// JobQueue counts the job queue's jobs by state, for operators.
	JobQueue(ctx context.Context) (JobQueue, error)
	// Setting is the value of the installation's setting name (ErrNotFound: none);
	// PutSetting writes it (settings: what serve tells other processes).
	Setting(ctx context.Context, name string) (string, error)
	PutSetting(ctx context.Context, name, value string, at time.Time) error
	// ServersByStatus counts the live servers by the status their owners see
	// (suspended over the machine's status), for operators; statuses without any
	// server are left out.
	ServersByStatus(ctx context.Context) (map[hosting.Status]int, error)
}

// ErrUnreachable is returned by Store.Ready when the database does not answer.
var ErrUnreachable = errors.New("store: database unreachable")

// ErrNotMigrated is returned by Store.Ready when the database's schema is older than
// this build's (or has no schema at all): run berthd migrate.
var ErrNotMigrated = errors.New("store: schema not migrated")

// JobQueue is what the job queue holds that is not finished.
type JobQueue struct {
	// Available jobs wait for a worker; Running ones are being worked; Retryable ones
	// failed an attempt and wait for their next.
	Available, Running, Retryable int
	// OldestAvailable is when the longest-waiting available job became available
	// (nil: none is).
	OldestAvailable *time.Time
}

// A Hold keeps the first write transaction run under its context (WithHold) open past
// the end of its function: InTx returns nil as if it had committed, and the holder
// commits it later, adding to it what it learned in between. An idempotent request
// uses it so that its answer, rendered only after its use case returned, commits
// together with the change the use case made: after any crash, either both are in the
// database or neither is. Later write transactions under the same context join the
// held one (each atomic on its own, as a savepoint) instead of waiting for it.
//
// A Hold belongs to one goroutine: the request's.
type Hold struct {
	parked Tx
	finish func(commit bool) error
	used   bool
}

type holdKey struct{}

// WithHold returns a context whose first write transaction is held, and its Hold. The
// holder must end it with Commit or Release (deferred: a held transaction holds the
// database's writer).
func WithHold(ctx context.Context) (context.Context, *Hold) {
	h := &Hold{}
	return context.WithValue(ctx, holdKey{}, h), h
}

// HoldOf returns the Hold of ctx, or nil; for Store implementations.
func HoldOf(ctx context.Context) *Hold {
	h, _ := ctx.Value(holdKey{}).(*Hold)
	return h
}

// Take reports whether a transaction that is about to commit is to be held instead
// (the first one under the Hold's context); for Store implementations, which then
// call Park.
func (h *Hold) Take() bool { return h != nil && !h.used }

// Park holds tx: finish(true) is to commit it, finish(false) to roll it back; for
// Store implementations.
func (h *Hold) Park(tx Tx, finish func(commit bool) error) {
	h.parked, h.finish, h.used = tx, finish, true
}

// Parked is the transaction held now, or nil; for Store implementations, which run
// later transactions of the same context inside it.
func (h *Hold) Parked() Tx {
	if h == nil {
		return nil
	}
	return h.parked
}

// Held reports whether a transaction is held, waiting for Commit or Release.
func (h *Hold) Held() bool { return h.parked != nil }

// Commit runs fn in the held transaction and commits them together; when fn fails,
// neither commits and its error is returned. Without a held transaction it does
// nothing.
func (h *Hold) Commit(fn func(tx Tx) error) error {
	if h.parked == nil {
		return nil
	}
	tx, finish := h.parked, h.finish
	h.parked, h.finish = nil, nil
	if err := fn(tx); err != nil {
		_ = finish(false)
		return err
	}
	return finish(true)
}

// Release rolls back a transaction still held; after Commit it does nothing.
func (h *Hold) Release() {
	if h.parked == nil {
		return
	}
	finish := h.finish
	h.parked, h.finish = nil, nil
	_ = finish(false)
}
