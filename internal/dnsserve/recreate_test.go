package dnsserve_test

import (
	"context"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/berthhq/berth/internal/dnsserve"
	"github.com/berthhq/berth/internal/dnszone"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/nameserver/embedded"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/store/sqlstore/sqlstoretest"
)

// TestRecreatedZoneAnsweredAfresh: what was answered of a zone deleted and made
// again the same day is never answered of the second, whose SOA serial is greater
// than the first's (a secondary transfers it; docs/operating.md, DNS).
func TestRecreatedZoneAnsweredAfresh(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqlstoretest.SQLite(t, t.TempDir())
	now := time.Now()
	var account, id int64
	write := func(fn func(tx store.Tx) error) {
		t.Helper()
		if err := db.InTx(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	write(func(tx store.Tx) (err error) {
		account, err = tx.CreateAccount(ctx, hosting.Account{Email: "re@example.com", Language: "en", Currency: "EUR", CreatedAt: now})
		return err
	})
	create := func(sets ...dnszone.RRset) {
		write(func(tx store.Tx) (err error) {
			id, err = tx.CreateDomain(ctx, hosting.Domain{AccountID: account, Name: "example.com", TTL: 3600, CreatedAt: now}, sets)
			return err
		})
	}
	create(dnszone.RRset{Name: "www", Type: dnszone.TypeA, Records: []dnszone.Record{{Value: "192.0.2.1"}}})
	src := dnsserve.New(db, dnsserve.Options{Nameservers: []string{"ns1.example.net"}, DefaultDomain: "srv.example.net"})
	addr := serve(t, embedded.New(src, embedded.Options{}))
	ask := func() string {
		m := new(dns.Msg).SetQuestion("www.example.com.", dns.TypeA)
		r, err := dns.Exchange(m, addr)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Answer) == 1 {
			return r.Answer[0].(*dns.A).A.String()
		}
		return dns.RcodeToString[r.Rcode]
	}
	if got := ask(); got != "192.0.2.1" {
		t.Fatalf("first zone: %s", got)
	}
	serial := func() uint32 {
		t.Helper()
		r, err := dns.Exchange(new(dns.Msg).SetQuestion("example.com.", dns.TypeSOA), addr)
		if err != nil || len(r.Answer) != 1 {
			t.Fatalf("SOA: %v, %v", r, err)
		}
		return r.Answer[0].(*dns.SOA).Serial
	}
	first := serial()
	write(func(tx store.Tx) error { return tx.DeleteDomain(ctx, id) })
	create()
	if got := ask(); got != "NXDOMAIN" {
		t.Fatalf("the zone made again, empty: www answered %s, want NXDOMAIN", got)
	}
	if again := serial(); !hosting.SerialGreater(again, first) {
		t.Errorf("the zone made again answers serial %d, not greater than the first's %d", again, first)
	}
}
