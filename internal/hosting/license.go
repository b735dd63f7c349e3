package hosting

import (
	"slices"
	"time"
)

// Licenses (docs/api.md, Licenses): software licenses sold with servers, billed by the
// calendar month as their vendors bill them, not by the hour.

// ResourceLicense is what the ledger charges a server's license as.
const ResourceLicense = "license"

// LicensePer says what a license's monthly price is for: a server, or each of its
// vCPUs.
type LicensePer string

// What a license is priced per.
const (
	LicensePerServer LicensePer = "server"
	LicensePerVCPU   LicensePer = "vcpu"
)

// LicensePers are the values of License.Per.
var LicensePers = []LicensePer{LicensePerServer, LicensePerVCPU}

// LicenseProvisioning is how a license becomes usable once a server holds it.
type LicenseProvisioning string

// How a license is provisioned: none (active at once), key_pool (a key from the
// operator's pool, active at once; an empty pool is out of stock), webhook (the
// operator's hook activates it).
const (
	ProvisionNone    LicenseProvisioning = "none"
	ProvisionKeyPool LicenseProvisioning = "key_pool"
	ProvisionWebhook LicenseProvisioning = "webhook"
)

// LicenseProvisionings are the values of License.Provisioning.
var LicenseProvisionings = []LicenseProvisioning{ProvisionNone, ProvisionKeyPool, ProvisionWebhook}

// License is a license product of the catalog.
type License struct {
	ID           int64
	Name         string
	Vendor       string
	Per          LicensePer
	PriceMonthly Money
	// ImageIDs are the images that require it: a server of one holds it from its
	// order or reinstall, and cannot remove it.
	ImageIDs     []int64
	Provisioning LicenseProvisioning
	// Hook is where a webhook license's changes go (provisioning webhook only; nil
	// otherwise). Its secrets are never shown: the store reads them for deliveries
	// alone (store.LicenseHook), not with the catalog's list.
	Hook *LicenseHook
	// InStock: a server can take one now (a key pool with a free key; set when read
	// for the catalog's list).
	InStock bool
}

// LicenseHook is the operator's hook of a webhook license (docs/operating.md,
// Licenses): Berth POSTs each change of a server's license to URL, signed with each
// of Secrets as account webhooks are (the first is the current one; a second signs
// too during a rotation).
type LicenseHook struct {
	URL     string
	Secrets []string
}

// MonthlyPrice is what the license costs a month on a server of vcpus.
func (l License) MonthlyPrice(vcpus int) Money {
	if l.Per == LicensePerVCPU {
		return l.PriceMonthly * Money(vcpus)
	}
	return l.PriceMonthly
}

// RequiredBy reports whether image requires the license.
func (l License) RequiredBy(image int64) bool { return slices.Contains(l.ImageIDs, image) }

// LicenseStatus is where a server's license stands.
type LicenseStatus string

// The statuses of a server's license.
const (
	LicensePending   LicenseStatus = "pending"
	LicenseActive    LicenseStatus = "active"
	LicenseFailed    LicenseStatus = "failed"
	LicenseCancelled LicenseStatus = "cancelled"
)

// ServerLicense is a license a server holds (or held: a cancelled one is listed until
// the month it was paid for ends).
type ServerLicense struct {
	ID        int64
	AccountID int64
	ServerID  int64
	LicenseID int64
	// Name is the product's, for the ledger and events.
	Name   string
	Status LicenseStatus
	// Key is its activation key (key_pool), "" when it has none; SealedKey is the
	// key as the store keeps it, sealed with the operator's key (docs/SECURITY.md).
	Key       string
	SealedKey []byte
	StartedAt time.Time
	// PaidThrough is the end of the last calendar month charged: the first of the
	// month after it. The metering pass charges the next month when it starts.
	PaidThrough time.Time
	// ChargedVCPUs is how many vCPUs the month in course was charged for (1 for a
	// per-server license): a rescale above it charges the difference.
	ChargedVCPUs int
	CancelledAt  *time.Time
}

// Held reports whether the license is still the server's (not cancelled or failed).
func (l ServerLicense) Held() bool { return l.Status == LicensePending || l.Status == LicenseActive }

// MaxServerLicenses bounds the licenses a server holds at once (and an order names);
// MaxListedLicenses those it lists, the cancelled ones whose month is paid included.
const (
	MaxServerLicenses = 16
	MaxListedLicenses = 64
)
