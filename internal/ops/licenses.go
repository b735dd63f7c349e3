package ops

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/berthhq/berth/internal/billing"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// Licenses (docs/api.md, Licenses): products of the catalog a server holds, each
// charged for the calendar month when it is accepted and on the first of each month
// while held, never refunded mid-month.

// LicenseKeySize is the size of the operator's key that seals the key pool's
// activation keys at rest (AES-256-GCM; docs/SECURITY.md).
const LicenseKeySize = 32

// newLicenseSeal is the AEAD of the operator's key (nil key: none, and no key pool
// is in stock).
func newLicenseSeal(key []byte) (cipher.AEAD, error) {
	if key == nil {
		return nil, nil
	}
	if len(key) != LicenseKeySize {
		return nil, fmt.Errorf("the license key is %d bytes, want %d", len(key), LicenseKeySize)
	}
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// licenseKeyAD binds a sealed key to its product: a key moved to another product's
// pool in the database does not open.
func licenseKeyAD(licenseID int64) []byte { return fmt.Appendf(nil, "berth license key %d", licenseID) }

// sealLicenseKey seals an activation key of a product (nonce, then the sealed key).
func (s *Service) sealLicenseKey(licenseID int64, key string) ([]byte, error) {
	nonce := make([]byte, s.licenseSeal.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return s.licenseSeal.Seal(nonce, nonce, []byte(key), licenseKeyAD(licenseID)), nil
}

// openLicenseKey opens what sealLicenseKey sealed.
func (s *Service) openLicenseKey(licenseID int64, sealed []byte) (string, error) {
	if s.licenseSeal == nil {
		return "", errors.New("a key pool's key, but no license key is configured (serve --license-key-file)")
	}
	n := s.licenseSeal.NonceSize()
	if len(sealed) < n {
		return "", errors.New("a sealed license key too short")
	}
	plain, err := s.licenseSeal.Open(nil, sealed[:n], sealed[n:], licenseKeyAD(licenseID))
	if err != nil {
		return "", fmt.Errorf("license key of product %d does not open with the configured key: %w", licenseID, err)
	}
	return string(plain), nil
}

// Licenses lists the catalog's license products. A key pool is out of stock when it
// has no free key, or when no key is configured to open its keys with.
func (s *Service) Licenses(ctx context.Context) ([]hosting.License, error) {
	list, err := s.store.Licenses(ctx)
	if err != nil {
		return nil, internal("licenses", err)
	}
	for i := range list {
		list[i].InStock = s.licenseInStock(list[i])
	}
	return list, nil
}

func (s *Service) licenseInStock(l hosting.License) bool {
	return l.InStock && (l.Provisioning != hosting.ProvisionKeyPool || s.licenseSeal != nil)
}

// ServerLicenses lists a server's licenses (docs/api.md, Licenses), each held one
// with its key.
func (s *Service) ServerLicenses(ctx context.Context, p hosting.Principal, ref hosting.ServerRef) ([]hosting.ServerLicense, error) {
	srv, err := s.Server(ctx, p, ref)
	if err != nil {
		return nil, err
	}
	list, err := s.store.ServerLicenses(ctx, srv.ID, s.NowFor(p.Account.ID))
	if err != nil {
		return nil, internal("server licenses", err)
	}
	for i := range list {
		if err := s.openKey(&list[i]); err != nil {
			return nil, err
		}
	}
	return list, nil
}

// openKey fills a server's license's Key from its SealedKey.
func (s *Service) openKey(l *hosting.ServerLicense) error {
	if len(l.SealedKey) == 0 {
		return nil
	}
	k, err := s.openLicenseKey(l.LicenseID, l.SealedKey)
	l.Key = k
	return internal("open license key", err)
}

// AddServerLicense has a server hold a license of the catalog, charged for the month
// in course at once (the credit must cover it: CodeInsufficientCredit on
// license_id). Unknown, held already or out of stock: 422 on license_id.
func (s *Service) AddServerLicense(ctx context.Context, p hosting.Principal, serverID int64, licenseID *int64) (hosting.ServerLicense, error) {
	var out hosting.ServerLicense
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		srv, err := s.writable(ctx, tx, p, serverID)
		if err != nil {
			return err
		}
		if licenseID == nil {
			return hosting.Invalid("license_id", "validation.required")
		}
		var v hosting.Validation
		lics, err := s.checkLicenseIDs(ctx, tx, &v, "license_id", &srv, []int64{*licenseID})
		if err != nil {
			return err
		}
		if err := v.Err(); err != nil {
			return err
		}
		acct, err := tx.Account(ctx, p.Account.ID)
		if err != nil {
			return internal("account", err)
		}
		out, err = s.holdLicense(ctx, tx, acct, srv, lics[0], "license_id")
		return err
	})
	return out, err
}

// RemoveServerLicense cancels a server's license: its key goes back to the pool; it
// stays listed as cancelled until its paid month ends, and nothing is refunded. A
// license the server's image requires cannot be removed (422 on license_id).
func (s *Service) RemoveServerLicense(ctx context.Context, p hosting.Principal, serverID, id int64) error {
	return s.store.InTx(ctx, func(tx store.Tx) error {
		srv, err := s.writable(ctx, tx, p, serverID)
		if err != nil {
			return err
		}
		sl, err := tx.ServerLicense(ctx, srv.ID, id)
		if errors.Is(err, store.ErrNotFound) || (err == nil && !sl.Held()) {
			return hosting.ErrNotFound()
		} else if err != nil {
			return internal("server license", err)
		}
		if lic, err := tx.License(ctx, sl.LicenseID); err == nil && lic.RequiredBy(srv.ImageID) {
			return hosting.Invalid("license_id", "validation.license_required_by_image")
		} else if err != nil && !errors.Is(err, store.ErrNotFound) {
			return internal("license", err)
		}
		return s.cancelLicense(ctx, tx, sl)
	})
}

// checkLicenseIDs finds the products ids name, for srv (nil for a server being
// ordered): each must be sold, in stock, named once and not held by the server
// already, and the server's list must have room; each failure is recorded on field.
func (s *Service) checkLicenseIDs(ctx context.Context, tx store.Tx, v *hosting.Validation, field string, srv *hosting.Server,
	ids []int64) ([]hosting.License, error) {
	if len(ids) > hosting.MaxServerLicenses {
		v.Add(field, "validation.license_too_many", "max", hosting.MaxServerLicenses)
		return nil, nil
	}
	var held []hosting.ServerLicense
	if srv != nil {
		// Listed are those held and those cancelled whose month is paid: both bound
		// the server's list (docs/SECURITY.md).
		listed, err := tx.ServerLicenses(ctx, srv.ID, s.NowFor(srv.AccountID))
		if err != nil {
			return nil, internal("server licenses", err)
		}
		held = slices.DeleteFunc(listed, func(l hosting.ServerLicense) bool { return !l.Held() })
		if len(held)+len(ids) > hosting.MaxServerLicenses || len(listed)+len(ids) > hosting.MaxListedLicenses {
			v.Add(field, "validation.license_too_many", "max", hosting.MaxServerLicenses)
			return nil, nil
		}
	}
	var out []hosting.License
	seen := map[int64]bool{}
	for _, id := range ids {
		if seen[id] {
			v.Add(field, "validation.license_repeated", "id", id)
			continue
		}
		seen[id] = true
		l, err := tx.License(ctx, id)
		switch {
		case errors.Is(err, store.ErrNotFound):
			v.Add(field, "validation.license_unknown", "id", id)
			continue
		case err != nil:
			return nil, internal("license", err)
		case slices.ContainsFunc(held, func(h hosting.ServerLicense) bool { return h.LicenseID == id && h.Held() }):
			v.Add(field, "validation.license_held", "id", id)
			continue
		case !s.licenseInStock(l):
			v.Add(field, "validation.license_out_of_stock", "name", l.Name)
			continue
		}
		out = append(out, l)
	}
	return out, nil
}

// requiredLicenses are the products sold now that image requires.
func requiredLicenses(ctx context.Context, tx store.Tx, image int64) ([]hosting.License, error) {
	all, err := tx.Licenses(ctx)
	if err != nil {
		return nil, internal("licenses", err)
	}
	var out []hosting.License
	for _, l := range all {
		if l.RequiredBy(image) {
			out = append(out, l)
		}
	}
	return out, nil
}

// orderLicenses are the products an order holds: those it names (license_ids) and
// those its image requires, each once; checked on license_ids (a required one out of
// stock on image_id).
func (s *Service) orderLicenses(ctx context.Context, tx store.Tx, v *hosting.Validation, ids []int64, image int64) ([]hosting.License, error) {
	named, err := s.checkLicenseIDs(ctx, tx, v, "license_ids", nil, ids)
	if err != nil || image == 0 {
		return named, err
	}
	required, err := requiredLicenses(ctx, tx, image)
	if err != nil {
		return nil, err
	}
	for _, l := range required {
		switch {
		case slices.ContainsFunc(named, func(n hosting.License) bool { return n.ID == l.ID }):
		case !s.licenseInStock(l):
			v.Add("image_id", "validation.license_out_of_stock", "name", l.Name)
		default:
			named = append(named, l)
		}
	}
	return named, nil
}

// licensesPrice is what products cost for a month on a server of vcpus.
func licensesPrice(ls []hosting.License, vcpus int) hosting.Money {
	var sum hosting.Money
	for _, l := range ls {
		sum += l.MonthlyPrice(vcpus)
	}
	return sum
}

// holdLicense has srv hold lic from now: written active (none, key_pool with a key
// of the pool) or pending (webhook: active once its hook answers the activate, sent
// now when the server has an address, else when it gets one), and its month in
// course charged; the credit must cover it
// (CodeInsufficientCredit on field) unless field is "" (a change that has happened:
// a reinstall's, charged even below zero, which suspends).
func (s *Service) holdLicense(ctx context.Context, tx store.Tx, acct hosting.Account, srv hosting.Server, lic hosting.License,
	field string) (hosting.ServerLicense, error) {
	now := s.NowFor(acct.ID)
	sl := hosting.ServerLicense{AccountID: acct.ID, ServerID: srv.ID, LicenseID: lic.ID, Name: lic.Name, Status: hosting.LicenseActive,
		StartedAt: now, PaidThrough: billing.MonthEnd(now), ChargedVCPUs: srv.VCPUs}
	var err error
	if lic.Provisioning == hosting.ProvisionWebhook {
		sl.Status = hosting.LicensePending
	}
	if sl.ID, err = tx.AddServerLicense(ctx, sl); err != nil {
		return sl, internal("add server license", err)
	}
	if lic.Provisioning == hosting.ProvisionWebhook && len(serverAddresses(srv)) > 0 {
		if err := s.licenseHook(ctx, tx, LicenseHookActivate, sl, srv); err != nil {
			return sl, err
		}
	}
	if lic.Provisioning == hosting.ProvisionKeyPool {
		sl.SealedKey, err = tx.TakeLicenseKey(ctx, lic.ID, sl.ID)
		if errors.Is(err, store.ErrNotFound) {
			if field == "" {
				field = "image_id"
			}
			return sl, hosting.Invalid(field, "validation.license_out_of_stock", "name", lic.Name)
		}
		if err != nil {
			return sl, internal("take license key", err)
		}
		if err := s.openKey(&sl); err != nil {
			return sl, err
		}
	}
	month := billing.MonthStart(now)
	if err := tx.RecordLicenseUse(ctx, []int64{sl.ID}, month, srv.VCPUs); err != nil {
		return sl, internal("license use", err)
	}
	t := hosting.Transaction{AccountID: acct.ID, Type: hosting.TxCharge, Amount: -lic.MonthlyPrice(srv.VCPUs),
		ResourceType: hosting.ResourceLicense, ResourceID: &sl.ID, ResourceName: lic.Name, PeriodStart: &month, CreatedAt: now}
	if err := s.chargeLicense(ctx, tx, t, field); err != nil {
		return sl, err
	}
	return sl, s.emitLicense(ctx, tx, hosting.EventLicenseCreated, sl)
}

// chargeLicense writes a license's charge t: covered by the credit, else
// CodeInsufficientCredit on field; with field "", whatever the credit (a credit
// below zero suspends the account's servers).
func (s *Service) chargeLicense(ctx context.Context, tx store.Tx, t hosting.Transaction, field string) error {
	if t.Amount == 0 {
		return nil
	}
	if field != "" {
		_, err := tx.AddCoveredTransaction(ctx, t)
		if errors.Is(err, store.ErrInsufficientCredit) {
			acct, err := tx.Account(ctx, t.AccountID)
			if err != nil {
				return internal("account", err)
			}
			var v hosting.Validation
			v.Add(field, "validation.license_credit_too_low", "amount", (-t.Amount).String(), "currency", acct.Currency)
			v.SetCode(hosting.CodeInsufficientCredit)
			return v.Err()
		}
		return internal("charge license", err)
	}
	written, err := tx.AddTransaction(ctx, t)
	if err != nil {
		return internal("charge license", err)
	}
	if written.BalanceAfter < 0 {
		return s.suspendForCredit(ctx, tx, t.AccountID)
	}
	return nil
}

// cancelLicense cancels a held license now: its key goes back to the pool, its hook
// (webhook) is told; what it was charged stays paid.
func (s *Service) cancelLicense(ctx context.Context, tx store.Tx, sl hosting.ServerLicense) error {
	if err := tx.CancelServerLicense(ctx, sl.ID, s.NowFor(sl.AccountID)); err != nil {
		return internal("cancel license", err)
	}
	was := sl.Status
	sl.Status, sl.SealedKey = hosting.LicenseCancelled, nil
	if err := s.licenseHookOnCancel(ctx, tx, sl, was); err != nil {
		return err
	}
	return s.emitLicense(ctx, tx, hosting.EventLicenseCancelled, sl)
}

// heldLicenses are the licenses a server holds now.
func heldLicenses(ctx context.Context, tx store.Tx, serverID int64) ([]hosting.ServerLicense, error) {
	all, err := tx.ServerLicenses(ctx, serverID, time.Time{})
	if err != nil {
		return nil, internal("server licenses", err)
	}
	return slices.DeleteFunc(all, func(l hosting.ServerLicense) bool { return !l.Held() }), nil
}

// cancelServerLicenses cancels every license a server holds (its deletion).
func (s *Service) cancelServerLicenses(ctx context.Context, tx store.Tx, serverID int64) error {
	held, err := heldLicenses(ctx, tx, serverID)
	if err != nil {
		return err
	}
	for _, sl := range held {
		if err := s.cancelLicense(ctx, tx, sl); err != nil {
			return err
		}
	}
	return nil
}

// refundLicenses cancels a server's licenses and gives back what they were charged:
// its provisioning failed, and a server that never ran costs nothing.
func (s *Service) refundLicenses(ctx context.Context, tx store.Tx, srv hosting.Server) error {
	held, err := heldLicenses(ctx, tx, srv.ID)
	if err != nil {
		return err
	}
	for _, sl := range held {
		if err := s.cancelLicense(ctx, tx, sl); err != nil {
			return err
		}
		if err := s.refundLicense(ctx, tx, sl); err != nil {
			return err
		}
	}
	return nil
}

// checkReinstallLicenses checks that the credit covers the month of the licenses
// image requires that the server does not hold yet (CodeInsufficientCredit on
// image_id), and that each is in stock.
func (s *Service) checkReinstallLicenses(ctx context.Context, tx store.Tx, srv hosting.Server, image int64) error {
	add, err := s.licensesToAdd(ctx, tx, srv, image)
	if err != nil {
		return err
	}
	var v hosting.Validation
	for _, l := range add {
		if !s.licenseInStock(l) {
			v.Add("image_id", "validation.license_out_of_stock", "name", l.Name)
		}
	}
	if err := v.Err(); err != nil {
		return err
	}
	acct, err := tx.Account(ctx, srv.AccountID)
	if err != nil {
		return internal("account", err)
	}
	if price := licensesPrice(add, srv.VCPUs); price > 0 && acct.Credit < price {
		v.Add("image_id", "validation.license_credit_too_low", "amount", price.String(), "currency", acct.Currency)
		v.SetCode(hosting.CodeInsufficientCredit)
	}
	return v.Err()
}

// licensesToAdd are the products image requires that srv does not hold.
func (s *Service) licensesToAdd(ctx context.Context, tx store.Tx, srv hosting.Server, image int64) ([]hosting.License, error) {
	required, err := requiredLicenses(ctx, tx, image)
	if err != nil {
		return nil, err
	}
	held, err := heldLicenses(ctx, tx, srv.ID)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(required, func(l hosting.License) bool {
		return slices.ContainsFunc(held, func(h hosting.ServerLicense) bool { return h.LicenseID == l.ID })
	}), nil
}

// relicense follows a reinstall from image was to image: the licenses was required
// and image does not are cancelled; those image requires are held from now, charged
// whatever the credit (the reinstall has happened).
func (s *Service) relicense(ctx context.Context, tx store.Tx, srv hosting.Server, was, image int64) error {
	held, err := heldLicenses(ctx, tx, srv.ID)
	if err != nil {
		return err
	}
	for _, sl := range held {
		lic, err := tx.License(ctx, sl.LicenseID)
		if errors.Is(err, store.ErrNotFound) {
			continue // no longer sold: kept until removed
		} else if err != nil {
			return internal("license", err)
		}
		if lic.RequiredBy(was) && !lic.RequiredBy(image) {
			if err := s.cancelLicense(ctx, tx, sl); err != nil {
				return err
			}
		}
	}
	add, err := s.licensesToAdd(ctx, tx, srv, image)
	if err != nil || len(add) == 0 {
		return err
	}
	acct, err := tx.Account(ctx, srv.AccountID)
	if err != nil {
		return internal("account", err)
	}
	for _, l := range add {
		if !s.licenseInStock(l) {
			// Its pool emptied since the reinstall was accepted: the server has the
			// image, and the license it requires failed (nothing charged).
			if err := s.failedLicense(ctx, tx, srv, l); err != nil {
				return err
			}
			continue
		}
		if _, err := s.holdLicense(ctx, tx, acct, srv, l, ""); err != nil {
			return err
		}
	}
	return nil
}

// failedLicense records that srv could not get lic: listed failed, never charged.
func (s *Service) failedLicense(ctx context.Context, tx store.Tx, srv hosting.Server, lic hosting.License) error {
	now := s.NowFor(srv.AccountID)
	sl := hosting.ServerLicense{AccountID: srv.AccountID, ServerID: srv.ID, LicenseID: lic.ID, Name: lic.Name, Status: hosting.LicenseFailed,
		StartedAt: now, PaidThrough: now}
	var err error
	if sl.ID, err = tx.AddServerLicense(ctx, sl); err != nil {
		return internal("add server license", err)
	}
	return s.emitLicense(ctx, tx, hosting.EventLicenseCreated, sl)
}

// rescaleLicenses charges, for the month in course, the vCPUs a rescale to vcpus adds
// to the server's per-vCPU licenses above those the month was paid for.
func (s *Service) rescaleLicenses(ctx context.Context, tx store.Tx, srv hosting.Server, vcpus int) error {
	held, err := heldLicenses(ctx, tx, srv.ID)
	if err != nil {
		return err
	}
	now := s.NowFor(srv.AccountID)
	ids := make([]int64, len(held))
	for i, sl := range held {
		ids[i] = sl.ID
	}
	// Up or down, the month's report counts the most vCPUs the server had.
	if err := tx.RecordLicenseUse(ctx, ids, billing.MonthStart(now), vcpus); err != nil {
		return internal("license use", err)
	}
	for _, sl := range held {
		if sl.ChargedVCPUs >= vcpus || !sl.PaidThrough.After(now) {
			continue // paid for as many; or its month in course is not charged yet
		}
		lic, err := tx.License(ctx, sl.LicenseID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			return internal("license", err)
		}
		if lic.Per != hosting.LicensePerVCPU {
			continue
		}
		if err := tx.SetLicenseVCPUs(ctx, sl.ID, vcpus); err != nil {
			return internal("license vcpus", err)
		}
		diff := lic.PriceMonthly * hosting.Money(vcpus-sl.ChargedVCPUs)
		t := hosting.Transaction{AccountID: srv.AccountID, Type: hosting.TxCharge, Amount: -diff, ResourceType: hosting.ResourceLicense,
			ResourceID: &sl.ID, ResourceName: sl.Name, PeriodStart: &now, CreatedAt: now}
		if err := s.chargeLicense(ctx, tx, t, ""); err != nil {
			return err
		}
	}
	return nil
}

// chargeLicenseMonths is the license part of a metering transaction: up to limit
// held licenses whose paid month ended at or before now are charged their next
// month, one set-based step (store.Tx.ChargeLicenses) per calendar month behind.
// done: none is due any more.
func (s *Service) chargeLicenseMonths(ctx context.Context, tx store.Tx, account int64, now time.Time, limit int) (got MeterResult, done bool, err error) {
	for got.Hours < limit {
		due, err := tx.EarliestLicenseDue(ctx, now, account)
		if err != nil || due == nil {
			return got, due == nil, err
		}
		res, err := tx.ChargeLicenses(ctx, store.LicenseStep{Month: *due, Now: now, Account: account, Limit: limit - got.Hours})
		if err != nil {
			return got, false, err
		}
		if res.Hours == 0 {
			return got, false, fmt.Errorf("a license month at %s is due but none was charged", due.Format(time.RFC3339))
		}
		for _, id := range res.Overdrawn {
			if err := s.suspendForCredit(ctx, tx, id); err != nil {
				return got, false, err
			}
		}
		if err := s.creditLow(ctx, tx, res.CreditLow, res.CreditMail); err != nil {
			return got, false, err
		}
		got.Hours += res.Hours
		got.Total += res.Total
		got.Overdrawn += len(res.Overdrawn)
	}
	return got, false, nil
}

// AddLicenseKeys adds activation keys to a key pool product's pool, sealed with the
// operator's key (berthd admin license keys add). Blank lines are skipped; a key is
// at most 1,024 bytes.
func (s *Service) AddLicenseKeys(ctx context.Context, licenseID int64, keys []string) (int, error) {
	if s.licenseSeal == nil {
		return 0, errors.New("no license key is configured to seal the keys with (--license-key-file)")
	}
	var sealed [][]byte
	for i, k := range keys {
		k = strings.TrimSpace(k)
		if k == "" {
			continue
		}
		if len(k) > 1024 {
			return 0, fmt.Errorf("key %d is longer than 1024 bytes", i+1)
		}
		b, err := s.sealLicenseKey(licenseID, k)
		if err != nil {
			return 0, err
		}
		sealed = append(sealed, b)
	}
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		l, err := tx.License(ctx, licenseID)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no license product %d is sold", licenseID)
		} else if err != nil {
			return err
		}
		if l.Provisioning != hosting.ProvisionKeyPool {
			return fmt.Errorf("license %s is provisioned %s, not from a key pool", l.Name, l.Provisioning)
		}
		return tx.AddLicenseKeys(ctx, licenseID, sealed, s.Now())
	})
	return len(sealed), err
}

// LicenseReportRow is a license held in a month (berthd admin license report): from
// and to bound the time it was held in the month.
type LicenseReportRow struct {
	License, Server, Account string
	From, To                 time.Time
	MaxVCPUs                 int
}

// LicenseReport lists the licenses held in the calendar month (UTC) of month, by the
// server's license, with the most vCPUs each server had in it: what a vendor's
// monthly report (Microsoft SPLA) asks for.
func (s *Service) LicenseReport(ctx context.Context, month time.Time) ([]LicenseReportRow, error) {
	start := billing.MonthStart(month)
	end := billing.MonthEnd(month)
	uses, err := s.store.LicenseReport(ctx, start)
	if err != nil {
		return nil, err
	}
	out := make([]LicenseReportRow, len(uses))
	for i, u := range uses {
		r := LicenseReportRow{License: u.License, Server: u.Server, Account: u.Account, From: u.Started, To: end, MaxVCPUs: u.MaxVCPUs}
		if r.From.Before(start) {
			r.From = start
		}
		if u.Cancelled != nil && u.Cancelled.Before(end) {
			r.To = *u.Cancelled
		}
		out[i] = r
	}
	return out, nil
}

// LicenseKeyCount is what a product's key pool holds.
type LicenseKeyCount struct {
	License     hosting.License
	Total, Free int
}

// LicenseKeys counts the keys of a key pool product's pool (berthd admin license
// keys list); the keys themselves are shown only to the servers' accounts.
func (s *Service) LicenseKeys(ctx context.Context, licenseID int64) (LicenseKeyCount, error) {
	var out LicenseKeyCount
	l, err := s.store.License(ctx, licenseID)
	if errors.Is(err, store.ErrNotFound) {
		return out, fmt.Errorf("no license product %d is sold", licenseID)
	} else if err != nil {
		return out, err
	}
	out.License = l
	out.Total, out.Free, err = s.store.LicenseKeys(ctx, licenseID)
	return out, err
}

// emitLicense emits typ about a server's license.
func (s *Service) emitLicense(ctx context.Context, tx store.Tx, typ hosting.EventType, sl hosting.ServerLicense) error {
	return s.emit(ctx, tx, sl.AccountID, typ, hosting.EventResource{Type: "license", ID: sl.ID},
		hosting.LicenseEventData{ID: sl.ID, ServerID: sl.ServerID, LicenseID: sl.LicenseID, Name: sl.Name, Status: sl.Status})
}
