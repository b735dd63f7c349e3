package sqlstore_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/dnszone"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/store/sqlstore"
	"github.com/berthhq/berth/internal/store/sqlstore/sqlstoretest"
	"github.com/berthhq/berth/internal/testpg"
)

// TestCopyDomains: a copy to PostgreSQL carries zones with their serials and RRsets
// (records in their order, with their comments) and servers' PTRs, read back there as
// on SQLite; a zone made after the copy gets the next id.
func TestCopyDomains(t *testing.T) {
	t.Parallel()
	testpg.Require(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	src := sqlstoretest.SQLite(t, t.TempDir(), drivers()...)
	var acct, zone, srv int64
	err := src.InTx(ctx, func(tx store.Tx) error {
		err := tx.ApplyCatalog(ctx, hosting.Catalog{
			Plans:  []hosting.Plan{{ID: 1, Name: "small", VCPUs: 1, MemoryMB: 1024, DiskGB: 20, PriceHourly: 70, PriceMonthly: 45100}},
			Images: []hosting.Image{{ID: 1, Name: "ubuntu-24.04", OS: "ubuntu", Version: "24.04"}},
			Locations: []hosting.CatalogLocation{{Location: hosting.Location{ID: 1, Name: "fsn1", City: "Falkenstein", Country: "DE"},
				Offers: []hosting.PlanOffer{{PlanID: 1}}, ImageIDs: []int64{1}}},
		})
		if err != nil {
			return err
		}
		if acct, err = tx.CreateAccount(ctx, hosting.Account{Email: "dns@example.com", Language: "en", Currency: "EUR", CreatedAt: now}); err != nil {
			return err
		}
		if srv, err = tx.CreateServer(ctx, hosting.Server{AccountID: acct, Name: "server-copy01", DisplayName: "c", Status: hosting.StatusRunning,
			LocationID: 1, PlanID: 1, ImageID: 1, VCPUs: 1, MemoryMB: 1024, DiskGB: 20, CreatedAt: now}); err != nil {
			return err
		}
		if zone, err = tx.CreateDomain(ctx, hosting.Domain{AccountID: acct, Name: "example.com", TTL: 600, CreatedAt: now}, []dnszone.RRset{
			{Name: "@", Type: dnszone.TypeMX, Records: []dnszone.Record{{Value: "20 b.example.com.", Comment: "second"}, {Value: "10 a.example.com."}}},
		}); err != nil {
			return err
		}
		ttl := 60
		if _, err := tx.PutRRset(ctx, zone, dnszone.RRset{Name: "www", Type: dnszone.TypeA, TTL: &ttl,
			Records: []dnszone.Record{{Value: "192.0.2.1"}}}, now); err != nil {
			return err
		}
		return tx.SetPTR(ctx, hosting.PTR{ServerID: srv, IP: "192.0.2.1", PTR: "www.example.com"})
	})
	if err != nil {
		t.Fatal(err)
	}
	dst := kinds()[1].migrated(t, kinds()[1].fresh(t), drivers()...)
	counts, err := src.CopyTo(ctx, dst, nil)
	if err != nil {
		t.Fatal(err)
	}
	if counts["zones"] != 1 || counts["zone_rrsets"] != 2 || counts["server_ptrs"] != 1 {
		t.Errorf("copied %v", counts)
	}
	sameDomains(t, src, dst, acct, zone, srv)
	err = dst.InTx(ctx, func(tx store.Tx) error {
		id, err := tx.CreateDomain(ctx, hosting.Domain{AccountID: acct, Name: "example.org", TTL: 600, CreatedAt: now}, nil)
		if err == nil && id != zone+1 {
			t.Errorf("a zone made after the copy got id %d, want %d", id, zone+1)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// sameDomains checks that dst reads an account's zones, a zone's RRsets and served
// form, and a server's PTRs as src does.
func sameDomains(t *testing.T, src, dst *sqlstore.DB, acct, zone, srv int64) {
	t.Helper()
	ctx := context.Background()
	for name, read := range map[string]func(s *sqlstore.DB) (any, error){
		"Domains":    func(s *sqlstore.DB) (any, error) { return s.Domains(ctx, acct) },
		"RRsets":     func(s *sqlstore.DB) (any, error) { return s.RRsets(ctx, zone, store.RRsetFilter{}) },
		"ServedZone": func(s *sqlstore.DB) (any, error) { return s.ServedZone(ctx, zone) },
		"PTRs":       func(s *sqlstore.DB) (any, error) { return s.PTRs(ctx, srv) },
	} {
		want, err := read(src)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := read(dst); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s on PostgreSQL = %+v, %v;\nwant %+v as on SQLite", name, got, err, want)
		}
	}
}
