package hosting

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"
)

// An Event says that something of an account changed (docs/api.md, Events): written
// in the same transaction as the change, so there is one exactly when the change
// happened. Data is the event type's own JSON object.
type Event struct {
	ID        int64
	AccountID int64
	Type      EventType
	Resource  EventResource
	Data      json.RawMessage
	RequestID string
	CreatedAt time.Time
}

// EventResource names what an event is about.
type EventResource struct {
	Type string
	ID   int64
}

// EventType is `<resource>.<change>`.
type EventType string

// The event types of today's resources. EventTypes lists them for the API's filter
// and its document.
const (
	EventServerCreated       EventType = "server.created"
	EventServerUpdated       EventType = "server.updated"
	EventServerStatusChanged EventType = "server.status_changed"
	EventServerDeleted       EventType = "server.deleted"
	EventOperationStarted    EventType = "operation.started"
	EventOperationSucceeded  EventType = "operation.succeeded"
	EventOperationFailed     EventType = "operation.failed"
	EventSnapshotCreated     EventType = "snapshot.created"
	EventSnapshotUpdated     EventType = "snapshot.updated"
	EventSnapshotDeleted     EventType = "snapshot.deleted"
	EventSSHKeyCreated       EventType = "ssh_key.created"
	EventSSHKeyDeleted       EventType = "ssh_key.deleted"
	EventProjectCreated      EventType = "project.created"
	EventProjectUpdated      EventType = "project.updated"
	EventProjectDeleted      EventType = "project.deleted"
	EventRecipeCreated       EventType = "recipe.created"
	EventRecipeUpdated       EventType = "recipe.updated"
	EventRecipeDeleted       EventType = "recipe.deleted"
	EventBillingToppedUp     EventType = "billing.topped_up"
	EventBillingAdjusted     EventType = "billing.adjusted"
	EventBillingCreditLow    EventType = "billing.credit_low"
	EventAccountUpdated      EventType = "account.updated"
	EventAccountSuspended    EventType = "account.suspended"
	EventAccountUnsuspended  EventType = "account.unsuspended"
	EventWebhookCreated      EventType = "webhook.created"
	EventWebhookUpdated      EventType = "webhook.updated"
	EventWebhookDeleted      EventType = "webhook.deleted"
	EventWebhookDisabled     EventType = "webhook.disabled"
	EventWebhookTest         EventType = "webhook.test"
	EventVolumeCreated       EventType = "volume.created"
	EventVolumeUpdated       EventType = "volume.updated"
	EventVolumeAttached      EventType = "volume.attached"
	EventVolumeDetached      EventType = "volume.detached"
	EventVolumeResized       EventType = "volume.resized"
	EventVolumeDeleted       EventType = "volume.deleted"
	EventDomainCreated       EventType = "domain.created"
	EventDomainUpdated       EventType = "domain.updated"
	EventDomainDeleted       EventType = "domain.deleted"
	EventRRsetCreated        EventType = "rrset.created"
	EventRRsetUpdated        EventType = "rrset.updated"
	EventRRsetDeleted        EventType = "rrset.deleted"
	EventRDNSUpdated         EventType = "rdns.updated"
	EventLicenseCreated      EventType = "license.created"
	EventLicenseCancelled    EventType = "license.cancelled"
	EventLicenseActivated    EventType = "license.activated"
	EventLicenseFailed       EventType = "license.failed"
	EventTicketCreated       EventType = "ticket.created"
	EventTicketReplied       EventType = "ticket.replied"
	EventTicketCustomerReply EventType = "ticket.customer_replied"
	EventTicketClosed        EventType = "ticket.closed"
	EventTicketReopened      EventType = "ticket.reopened"
)

// EventTypes is every event type, in the order the API's document lists them.
var EventTypes = []EventType{
	EventServerCreated, EventServerUpdated, EventServerStatusChanged, EventServerDeleted,
	EventOperationStarted, EventOperationSucceeded, EventOperationFailed,
	EventSnapshotCreated, EventSnapshotUpdated, EventSnapshotDeleted,
	EventSSHKeyCreated, EventSSHKeyDeleted,
	EventProjectCreated, EventProjectUpdated, EventProjectDeleted,
	EventRecipeCreated, EventRecipeUpdated, EventRecipeDeleted,
	EventBillingToppedUp, EventBillingAdjusted, EventBillingCreditLow,
	EventAccountUpdated, EventAccountSuspended, EventAccountUnsuspended,
	EventWebhookCreated, EventWebhookUpdated, EventWebhookDeleted, EventWebhookDisabled, EventWebhookTest,
	EventVolumeCreated, EventVolumeUpdated, EventVolumeAttached, EventVolumeDetached, EventVolumeResized, EventVolumeDeleted,
	EventDomainCreated, EventDomainUpdated, EventDomainDeleted,
	EventRRsetCreated, EventRRsetUpdated, EventRRsetDeleted,
	EventRDNSUpdated,
	EventLicenseCreated, EventLicenseActivated, EventLicenseFailed, EventLicenseCancelled,
	EventTicketCreated, EventTicketReplied, EventTicketCustomerReply, EventTicketClosed, EventTicketReopened,
}

// EventResourceTypes are what events are about. Billing events are about the account.
// RRset events are about their zone ("domain"), and reverse DNS events about their
// server.
var EventResourceTypes = []string{"server", "operation", "snapshot", "ssh_key", "project", "recipe", "account", "webhook", "volume", "domain", "license", "ticket"}

// CreditLowDays: billing.credit_low says that an hourly charge took the credit below
// this many days of the account's hourly burn.
const CreditLowDays = 7

// CreditMailDays: the low-credit warning mail goes to the account holder when an
// hourly charge took the credit below this many days of the hourly burn (its
// days_left below it), once each time it falls below.
const CreditMailDays = 3

// EventRetention is how long events are kept.
const EventRetention = 30 * 24 * time.Hour

// EventFilter narrows an account's events: those after a cursor, of some types,
// about one resource. Limit is 1 to MaxEventLimit.
//
// Listed oldest first (GET /events reads on from its cursor), or with Newest the
// newest first, which a page of the latest events needs (the console's activity):
// Before, when not 0, then admits only the events older than that id, the cursor of
// its next page.
type EventFilter struct {
	After    int64
	Before   int64
	Newest   bool
	Types    []EventPattern
	Resource *EventResource
	Limit    int
}

// The bounds of GET /events's limit and wait.
const (
	DefaultEventLimit = 100
	MaxEventLimit     = 1000
	MaxEventWait      = 60 * time.Second
)

// An EventPattern is a type (`server.created`), a resource's types (`server.*`), or
// every type (`*`).
type EventPattern string

// Prefix is what a pattern's types start with, and whether it is a glob: `server.*`
// gives ("server.", true), `*` ("", true), a type itself (type, false).
func (p EventPattern) Prefix() (string, bool) {
	if s, ok := strings.CutSuffix(string(p), "*"); ok {
		return s, true
	}
	return string(p), false
}

// Matches reports whether t is one of the pattern's types.
func (p EventPattern) Matches(t EventType) bool {
	prefix, glob := p.Prefix()
	if glob {
		return strings.HasPrefix(string(t), prefix)
	}
	return string(t) == prefix
}

// ParseEventPatterns reads a comma-separated list of patterns; msg is the message
// key of the first that names no type (a typo would otherwise match nothing, for
// ever, without a word). Empty items are refused too.
func ParseEventPatterns(list string) (_ []EventPattern, msg string) {
	var out []EventPattern
	for item := range strings.SplitSeq(list, ",") {
		p := EventPattern(strings.TrimSpace(item))
		if !slices.ContainsFunc(EventTypes, p.Matches) || strings.Count(string(p), "*") > 1 ||
			(strings.Contains(string(p), "*") && !strings.HasSuffix(string(p), ".*") && p != "*") {
			return nil, "validation.event_types"
		}
		out = append(out, p)
	}
	return out, ""
}

// ParseEventResource reads `server:12`.
func ParseEventResource(s string) (EventResource, bool) {
	kind, id, ok := strings.Cut(s, ":")
	n, err := strconv.ParseInt(id, 10, 64)
	if !ok || err != nil || n <= 0 || !slices.Contains(EventResourceTypes, kind) {
		return EventResource{}, false
	}
	return EventResource{Type: kind, ID: n}, true
}

// The data of each family of events: what the change was, compact. A field that only
// some of a family's types carry is left out of the others.
type (
	// ServerEventData: PreviousStatus for server.status_changed, Changes (the
	// fields changed) for server.updated.
	ServerEventData struct {
		ID             int64    `json:"id"`
		Name           string   `json:"name"`
		Status         Status   `json:"status"`
		PreviousStatus Status   `json:"previous_status,omitempty"`
		Changes        []string `json:"changes,omitempty"`
	}
	// OperationEventData: Error for operation.failed; VolumeID for a volume's
	// operation, whose ServerID is null when it concerns no server.
	OperationEventData struct {
		ID       int64    `json:"id"`
		ServerID *int64   `json:"server_id"`
		VolumeID *int64   `json:"volume_id,omitempty"`
		Type     OpType   `json:"type"`
		Status   OpStatus `json:"status"`
		Error    string   `json:"error,omitempty"`
	}
	// VolumeEventData: Changes (the fields changed) for volume.updated; ServerID the
	// server it is attached to, or, for volume.detached, was.
	VolumeEventData struct {
		ID       int64        `json:"id"`
		Name     string       `json:"name"`
		SizeGB   int          `json:"size_gb"`
		Status   VolumeStatus `json:"status"`
		ServerID *int64       `json:"server_id"`
		Changes  []string     `json:"changes,omitempty"`
	}
	// LicenseEventData names a server's license and its product, with its status
	// after the change.
	LicenseEventData struct {
		ID        int64         `json:"id"`
		ServerID  int64         `json:"server_id"`
		LicenseID int64         `json:"license_id"`
		Name      string        `json:"name"`
		Status    LicenseStatus `json:"status"`
	}
	// TicketEventData names a support ticket with its status after the change;
	// MessageID is the message that caused it (ticket.replied,
	// ticket.customer_replied, and ticket.created's first message). A staff note
	// causes no event: the customer never learns of it.
	TicketEventData struct {
		ID        int64          `json:"id"`
		Subject   string         `json:"subject"`
		Status    TicketStatus   `json:"status"`
		Priority  TicketPriority `json:"priority"`
		MessageID *int64         `json:"message_id,omitempty"`
	}
	// DomainEventData: Changes for domain.updated ("ttl", or "rrsets" when a zone
	// file replaced them).
	DomainEventData struct {
		ID      int64    `json:"id"`
		Name    string   `json:"name"`
		Serial  uint32   `json:"serial"`
		Changes []string `json:"changes,omitempty"`
	}
	// RRsetEventData names the RRset of a zone that was created, replaced or
	// deleted, and the zone's serial after the change.
	RRsetEventData struct {
		DomainID int64  `json:"domain_id"`
		Domain   string `json:"domain"`
		Name     string `json:"name"`
		Type     string `json:"type"`
		Serial   uint32 `json:"serial"`
	}
	// RDNSEventData: the server's address and its PTR after the change (the default
	// when it went back to it).
	RDNSEventData struct {
		ServerID int64  `json:"server_id"`
		IP       string `json:"ip"`
		PTR      string `json:"ptr"`
	}
	SnapshotEventData struct {
		ID       int64  `json:"id"`
		ServerID int64  `json:"server_id"`
		Name     string `json:"name"`
		Status   string `json:"status"`
	}
	SSHKeyEventData struct {
		ID          int64  `json:"id"`
		Name        string `json:"name"`
		Fingerprint string `json:"fingerprint"`
	}
	// NamedEventData is a project's or a recipe's.
	NamedEventData struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	}
	// BillingEventData: Amount for billing.topped_up and billing.adjusted. Money as the API writes it
	// (Money.String).
	BillingEventData struct {
		Credit string `json:"credit"`
		Amount string `json:"amount,omitempty"`
	}
	// AccountEventData: Changes for account.updated, Reason for a suspension and
	// its end ("credit").
	AccountEventData struct {
		Changes []string `json:"changes,omitempty"`
		Reason  string   `json:"reason,omitempty"`
	}
	// WebhookEventData: Changes (the fields changed) for webhook.updated, Reason
	// (WebhookGone, WebhookFailing) for webhook.disabled.
	WebhookEventData struct {
		ID      int64    `json:"id"`
		URL     string   `json:"url"`
		Enabled bool     `json:"enabled"`
		Changes []string `json:"changes,omitempty"`
		Reason  string   `json:"reason,omitempty"`
	}
)

type requestIDKey struct{}

// WithRequestID returns ctx carrying the id of the API request it serves: the events
// its changes write name it.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestIDOf is the request id ctx carries, "" for none (a job, an operator's
// command).
func RequestIDOf(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}
