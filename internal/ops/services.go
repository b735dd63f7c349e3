package ops

import (
	"context"
	"io"
	"time"

	"github.com/berthhq/berth/internal/billing"
	"github.com/berthhq/berth/internal/dnszone"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// The edges — the API's handlers (internal/httpapi) and the web console — call the
// core through one small interface per resource (the shape of wtf's DialService):
// the Service implements every one of them (Services), and an edge's test may give a
// fake of the one it exercises.

// Services are the core's interfaces an edge calls.
type Services struct {
	Gate       GateService
	Sessions   SessionService
	Accounts   AccountService
	Catalog    CatalogService
	Servers    ServerService
	Snapshots  SnapshotService
	SSHKeys    SSHKeyService
	Projects   ProjectService
	Recipes    RecipeService
	Operations OperationService
	Consoles   ConsoleService
	Sandbox    SandboxService
	Events     EventService
	Webhooks   WebhookService
	Volumes    VolumeService
	Domains    DomainService
	RDNS       RDNSService
	Licenses   LicenseService
	Tickets    TicketService
	Staff      StaffService
}

// Services is every one of the core's interfaces answered by s.
func (s *Service) Services() Services {
	return Services{Gate: s, Sessions: s, Accounts: s, Catalog: s, Servers: s, Snapshots: s, SSHKeys: s,
		Projects: s, Recipes: s, Operations: s, Consoles: s, Sandbox: s, Events: s, Webhooks: s, Volumes: s,
		Domains: s, RDNS: s, Licenses: s, Tickets: s, Staff: s}
}

// GateService is what every request passes through: its token, its idempotency key,
// the audit log, and the time on its account's clock.
type GateService interface {
	// Authenticate resolves a bearer token: CodeUnauthenticated when it is not one.
	Authenticate(ctx context.Context, secret string) (hosting.Principal, error)
	// Idempotent runs run once per key and body (docs/api.md, Idempotency and operations) and answers the
	// first response again for a repeat; replayed tells which.
	Idempotent(ctx context.Context, p hosting.Principal, key string, hash []byte, run func(ctx context.Context) Response) (Response, bool, error)
	// Audit records a request that changed something.
	Audit(ctx context.Context, e hosting.AuditEntry)
	// NowFor is the time on an account's clock.
	NowFor(accountID int64) time.Time
	// Now is the system clock's time.
	Now() time.Time
}

// SessionService is the web console's sign-in sessions.
type SessionService interface {
	// SignIn checks an email and password and starts a session of ttl: the session,
	// its account and its secret (the cookie). CodeUnauthenticated when they do not
	// match.
	SignIn(ctx context.Context, email, password string, ttl time.Duration) (hosting.Session, hosting.Account, string, error)
	// SessionPrincipal resolves a session's secret: CodeUnauthenticated when it is not
	// one, or expired.
	SessionPrincipal(ctx context.Context, secret string) (hosting.Principal, hosting.Session, error)
	SignOut(ctx context.Context, secret string) error
	// ChangePassword replaces the account's password and ends its other sessions
	// (all but keep's): CodeValidationFailed for a wrong current password, a new one
	// out of bounds or not repeated.
	ChangePassword(ctx context.Context, p hosting.Principal, keep, current, next, again string) error
	// RequestPasswordReset mails the account of email a one-use link to set a new
	// password; nil whether or not the email is an account's (nothing is sent then).
	RequestPasswordReset(ctx context.Context, email string) error
	// PasswordResetAccount is the account a reset link's token is for:
	// ErrPasswordResetInvalid when it is unknown, used or expired.
	PasswordResetAccount(ctx context.Context, token string) (hosting.Account, error)
	// ResetPassword sets the password with a reset link's token and ends every
	// session of the account: CodeValidationFailed for a password out of bounds or
	// not repeated, ErrPasswordResetInvalid for a token that does not work.
	ResetPassword(ctx context.Context, token, next, again string) error
}

// AccountService is the principal's account: its language, budget, billing, ledger
// and API tokens.
type AccountService interface {
	Account(ctx context.Context, p hosting.Principal) (hosting.Account, error)
	SetLanguage(ctx context.Context, p hosting.Principal, lang string) (hosting.Account, error)
	UpdateBudget(ctx context.Context, p hosting.Principal, budget *hosting.Money) (hosting.Account, error)
	Billing(ctx context.Context, p hosting.Principal) (billing.Summary, error)
	Transactions(ctx context.Context, p hosting.Principal, page int) ([]hosting.Transaction, int, error)
	DailySpend(ctx context.Context, p hosting.Principal, days int) ([]hosting.DaySpend, error)
	AccountTokens(ctx context.Context, p hosting.Principal) ([]hosting.Token, error)
	CreateAccountToken(ctx context.Context, p hosting.Principal, name string, scopes []string, expiresIn time.Duration) (hosting.Token, string, error)
	RevokeAccountToken(ctx context.Context, p hosting.Principal, id int64) error
}

// CatalogService is what can be ordered.
type CatalogService interface {
	Locations(ctx context.Context) ([]LocationOffer, error)
	Apps(ctx context.Context) ([]hosting.App, error)
}

// ServerService is the principal's servers.
type ServerService interface {
	Servers(ctx context.Context, p hosting.Principal, f store.ServerFilter) ([]hosting.Server, error)
	Server(ctx context.Context, p hosting.Principal, ref hosting.ServerRef) (hosting.Server, error)
	// WritableServer is Server, then CodeServerSuspended for a suspended one.
	WritableServer(ctx context.Context, p hosting.Principal, ref hosting.ServerRef) (hosting.Server, error)
	OrderServer(ctx context.Context, p hosting.Principal, o Order) (hosting.Server, error)
	UpdateServer(ctx context.Context, p hosting.Principal, id int64, u ServerUpdate) (hosting.Server, error)
	DeleteServer(ctx context.Context, p hosting.Principal, id int64) error
	Power(ctx context.Context, p hosting.Principal, id int64, action hosting.PowerAction) (hosting.Server, error)
	Reinstall(ctx context.Context, p hosting.Principal, id int64, imageID *int64) (hosting.Server, error)
	RescaleOptions(ctx context.Context, p hosting.Principal, ref hosting.ServerRef) ([]RescaleOption, error)
	Rescale(ctx context.Context, p hosting.Principal, id int64, planID *int64, upgradeDisk bool) (hosting.Server, error)
}

// SnapshotService is the snapshots of the principal's servers.
type SnapshotService interface {
	Snapshots(ctx context.Context, p hosting.Principal, ref hosting.ServerRef) ([]hosting.Snapshot, error)
	// WritableSnapshot finds a server and its snapshot: CodeNotFound for either,
	// then CodeServerSuspended.
	WritableSnapshot(ctx context.Context, p hosting.Principal, ref hosting.ServerRef, snapshotID int64) (hosting.Server, hosting.Snapshot, error)
	CreateSnapshot(ctx context.Context, p hosting.Principal, id int64, name *string, includeMemory bool) (hosting.Snapshot, error)
	RestoreSnapshot(ctx context.Context, p hosting.Principal, id, snapshotID int64) (hosting.Server, error)
	DeleteSnapshot(ctx context.Context, p hosting.Principal, id, snapshotID int64) (deleted bool, err error)
}

// SSHKeyService is the principal's SSH keys.
type SSHKeyService interface {
	SSHKeys(ctx context.Context, p hosting.Principal) ([]hosting.SSHKey, error)
	CreateSSHKey(ctx context.Context, p hosting.Principal, name, publicKey *string) (hosting.SSHKey, error)
	DeleteSSHKey(ctx context.Context, p hosting.Principal, id int64) error
}

// VolumeService is the principal's volumes (docs/api.md, Volumes).
type VolumeService interface {
	Volumes(ctx context.Context, p hosting.Principal, f store.VolumeFilter) ([]hosting.Volume, error)
	Volume(ctx context.Context, p hosting.Principal, ref hosting.VolumeRef) (hosting.Volume, error)
	CreateVolume(ctx context.Context, p hosting.Principal, o VolumeOrder) (hosting.Volume, error)
	UpdateVolume(ctx context.Context, p hosting.Principal, ref hosting.VolumeRef, u VolumeUpdate) (hosting.Volume, error)
	DeleteVolume(ctx context.Context, p hosting.Principal, ref hosting.VolumeRef) error
	AttachVolume(ctx context.Context, p hosting.Principal, ref hosting.VolumeRef, serverID *int64, automount *bool) (hosting.Volume, error)
	DetachVolume(ctx context.Context, p hosting.Principal, ref hosting.VolumeRef) (hosting.Volume, error)
	ResizeVolume(ctx context.Context, p hosting.Principal, ref hosting.VolumeRef, sizeGB *int64) (hosting.Volume, error)
}

// DomainService is the principal's DNS zones and their RRsets (docs/api.md,
// Domains). A zone is named by hosting.DomainRef (ParseDomainRef); an RRset by its
// name and type as a path gives them.
type DomainService interface {
	Domains(ctx context.Context, p hosting.Principal) ([]hosting.Domain, error)
	Domain(ctx context.Context, p hosting.Principal, ref hosting.DomainRef) (hosting.Domain, error)
	CreateDomain(ctx context.Context, p hosting.Principal, c DomainCreate) (hosting.Domain, error)
	SetDomainTTL(ctx context.Context, p hosting.Principal, ref hosting.DomainRef, ttl *int64) (hosting.Domain, error)
	DeleteDomain(ctx context.Context, p hosting.Principal, ref hosting.DomainRef) error
	RRsets(ctx context.Context, p hosting.Principal, ref hosting.DomainRef, name, typ string) ([]dnszone.RRset, error)
	RRset(ctx context.Context, p hosting.Principal, ref hosting.DomainRef, name, typ string) (dnszone.RRset, error)
	PutRRset(ctx context.Context, p hosting.Principal, ref hosting.DomainRef, name, typ string, ttl *int64, records []RecordInput) (dnszone.RRset, bool, error)
	DeleteRRset(ctx context.Context, p hosting.Principal, ref hosting.DomainRef, name, typ string) error
	ZoneFile(ctx context.Context, p hosting.Principal, ref hosting.DomainRef) (string, error)
	ImportZoneFile(ctx context.Context, p hosting.Principal, ref hosting.DomainRef, text string) (hosting.Domain, error)
	// Nameservers are the operator's; OperatorRRsets how many RRsets of each zone
	// are the operator's (its SOA and apex NS).
	Nameservers() []string
	OperatorRRsets() int
}

// ProjectService is the principal's projects.
type ProjectService interface {
	Projects(ctx context.Context, p hosting.Principal) ([]hosting.Project, error)
	Project(ctx context.Context, p hosting.Principal, id int64) (hosting.Project, error)
	CreateProject(ctx context.Context, p hosting.Principal, name *string) (hosting.Project, error)
	RenameProject(ctx context.Context, p hosting.Principal, id int64, name *string) (hosting.Project, error)
	DeleteProject(ctx context.Context, p hosting.Principal, id int64) error
}

// RecipeService is the principal's recipes.
type RecipeService interface {
	RecipesAfter(ctx context.Context, p hosting.Principal, after int64, limit int) ([]hosting.Recipe, error)
	// RecipeNames lists the principal's recipes without their scripts.
	RecipeNames(ctx context.Context, p hosting.Principal) ([]hosting.Recipe, error)
	Recipe(ctx context.Context, p hosting.Principal, id int64) (hosting.Recipe, error)
	CreateRecipe(ctx context.Context, p hosting.Principal, name, script *string) (hosting.Recipe, error)
	UpdateRecipe(ctx context.Context, p hosting.Principal, id int64, name, script *string) (hosting.Recipe, error)
	DeleteRecipe(ctx context.Context, p hosting.Principal, id int64) error
}

// OperationService is the operations of the principal's servers.
type OperationService interface {
	Operations(ctx context.Context, p hosting.Principal, f store.OperationFilter, page int) ([]hosting.Operation, int, error)
	// Operation finds one, waiting up to wait for it to end.
	Operation(ctx context.Context, p hosting.Principal, id int64, wait time.Duration) (hosting.Operation, error)
}

// ConsoleService is the servers' serial consoles.
type ConsoleService interface {
	ConsoleTicket(ctx context.Context, p hosting.Principal, ref hosting.ServerRef) (IssuedTicket, error)
	ConsoleAllowed(ctx context.Context, accountID int64, ref hosting.ServerRef) error
	OpenConsole(ctx context.Context, secret string, ref hosting.ServerRef) (io.ReadWriteCloser, hosting.Account, error)
}

// EventService is what happened to the principal's account.
type EventService interface {
	// Events lists the events f admits, oldest first (newest first with f.Newest);
	// with wait > 0 and none yet, it holds until one comes or wait passes.
	Events(ctx context.Context, p hosting.Principal, f hosting.EventFilter, wait time.Duration) ([]hosting.Event, error)
}

// WebhookService is the principal's webhooks (docs/webhooks.md). A webhook's secret
// is in what CreateWebhook and RotateWebhookSecret answer; the edge shows it there
// only.
type WebhookService interface {
	Webhooks(ctx context.Context, p hosting.Principal) ([]hosting.Webhook, error)
	Webhook(ctx context.Context, p hosting.Principal, id int64) (hosting.Webhook, error)
	CreateWebhook(ctx context.Context, p hosting.Principal, u WebhookWrite) (hosting.Webhook, error)
	UpdateWebhook(ctx context.Context, p hosting.Principal, id int64, u WebhookWrite) (hosting.Webhook, error)
	DeleteWebhook(ctx context.Context, p hosting.Principal, id int64) error
	RotateWebhookSecret(ctx context.Context, p hosting.Principal, id int64) (hosting.Webhook, error)
	// TestWebhook sends the webhook a webhook.test event.
	TestWebhook(ctx context.Context, p hosting.Principal, id int64) error
	// WebhookDeliveries is a page (from 1) of its deliveries, newest first, and how
	// many it has.
	WebhookDeliveries(ctx context.Context, p hosting.Principal, id int64, page int) ([]hosting.WebhookDelivery, int, error)
	Redeliver(ctx context.Context, p hosting.Principal, id, deliveryID int64) (hosting.WebhookDelivery, error)
}

// SandboxService is the sandbox's calls (serve --sandbox).
type SandboxService interface {
	AdvanceClock(ctx context.Context, p hosting.Principal, by time.Duration) (time.Time, error)
	ResetAccount(ctx context.Context, p hosting.Principal, credit *string) (hosting.Account, error)
	Seed(ctx context.Context, p hosting.Principal, r SeedRequest) (Seeded, error)
	// FaultError is the error an HTTP fault answers with, as the real one would be.
	FaultError(ctx context.Context, p hosting.Principal, status int, target FaultTarget) error
	// SandboxStaffReply answers one of the principal's tickets as staff would.
	SandboxStaffReply(ctx context.Context, p hosting.Principal, ticketID int64, body, authorName *string) (hosting.TicketMessage, error)
}

var (
	_ GateService      = (*Service)(nil)
	_ SessionService   = (*Service)(nil)
	_ AccountService   = (*Service)(nil)
	_ CatalogService   = (*Service)(nil)
	_ ServerService    = (*Service)(nil)
	_ SnapshotService  = (*Service)(nil)
	_ SSHKeyService    = (*Service)(nil)
	_ ProjectService   = (*Service)(nil)
	_ RecipeService    = (*Service)(nil)
	_ OperationService = (*Service)(nil)
	_ ConsoleService   = (*Service)(nil)
	_ SandboxService   = (*Service)(nil)
	_ EventService     = (*Service)(nil)
	_ WebhookService   = (*Service)(nil)
	_ VolumeService    = (*Service)(nil)
)

// LicenseService is the catalog's licenses and the principal's servers' (docs/api.md,
// Licenses).
type LicenseService interface {
	Licenses(ctx context.Context) ([]hosting.License, error)
	ServerLicenses(ctx context.Context, p hosting.Principal, ref hosting.ServerRef) ([]hosting.ServerLicense, error)
	AddServerLicense(ctx context.Context, p hosting.Principal, serverID int64, licenseID *int64) (hosting.ServerLicense, error)
	RemoveServerLicense(ctx context.Context, p hosting.Principal, serverID, id int64) error
}
