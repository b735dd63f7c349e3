package dnsserve_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/dnsserve"
	"github.com/berthhq/berth/internal/dnszone"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/nameserver"
	"github.com/berthhq/berth/internal/nameserver/embedded"
	"github.com/berthhq/berth/internal/nameserver/nameservertest"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/store/sqlstore"
	"github.com/berthhq/berth/internal/store/sqlstore/sqlstoretest"
	"github.com/berthhq/berth/internal/testpg"
)

// storePublisher publishes a zone by writing it to the store, as the API does (the
// zone created if new, its RRsets replaced), its serial then set to the suite's.
type storePublisher struct {
	db      *sqlstore.DB
	account int64
}

func (p storePublisher) Publish(ctx context.Context, z nameserver.Zone) error {
	now := time.Now()
	return p.db.InTx(ctx, func(tx store.Tx) error {
		d, err := tx.Domain(ctx, p.account, hosting.DomainRef{Name: z.Name})
		if errors.Is(err, store.ErrNotFound) {
			d.ID, err = tx.CreateDomain(ctx, hosting.Domain{AccountID: p.account, Name: z.Name, TTL: z.TTL, CreatedAt: now}, nil)
		}
		if err != nil {
			return err
		}
		var sets []dnszone.RRset
		for _, s := range z.RRsets {
			name := strings.TrimSuffix(strings.TrimSuffix(s.Name, z.Name), ".")
			if name == "" {
				name = "@"
			}
			set := dnszone.RRset{Name: name, Type: dnszone.Type(s.Type), TTL: &s.TTL}
			for _, v := range s.Values {
				set.Records = append(set.Records, dnszone.Record{Value: v})
			}
			sets = append(sets, set)
		}
		if err := tx.ReplaceRRsets(ctx, d.ID, sets, now); err != nil {
			return err
		}
		q := `UPDATE zones SET serial = ? WHERE id = ?`
		if p.db.Postgres() {
			q = `UPDATE zones SET serial = $1 WHERE id = $2`
		}
		_, err = tx.SQL().ExecContext(ctx, q, int64(z.Serial), d.ID)
		return err
	})
}

func (p storePublisher) Withdraw(ctx context.Context, name string) error {
	return p.db.InTx(ctx, func(tx store.Tx) error {
		d, err := tx.Domain(ctx, p.account, hosting.DomainRef{Name: name})
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return tx.DeleteDomain(ctx, d.ID)
	})
}

// conformance runs the nameserver suite against the embedded server answering from
// a Source on the store db opens: what the suite publishes goes through the store.
func conformance(t *testing.T, open func(t *testing.T) *sqlstore.DB) {
	nameservertest.Exercise(t, func(t *testing.T, o nameservertest.Options) (nameserver.Publisher, string) {
		db := open(t)
		var account int64
		if err := db.InTx(context.Background(), func(tx store.Tx) error {
			var err error
			account, err = tx.CreateAccount(context.Background(), hosting.Account{Email: "suite@example.com", Language: "en",
				Currency: "EUR", CreatedAt: time.Now()})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		src := dnsserve.New(db, dnsserve.Options{Nameservers: nameservertest.Nameservers, DefaultDomain: "srv.berth-suite.example"})
		return storePublisher{db: db, account: account}, serve(t, embedded.New(src, embedded.Options{AllowTransfer: o.AllowTransfer}))
	})
}

func TestConformanceSQLite(t *testing.T) {
	t.Parallel()
	conformance(t, func(t *testing.T) *sqlstore.DB { return sqlstoretest.SQLite(t, t.TempDir()) })
}

func TestConformancePostgres(t *testing.T) {
	t.Parallel()
	testpg.Require(t)
	conformance(t, func(t *testing.T) *sqlstore.DB { return sqlstoretest.Postgres(t) })
}

// serve runs srv on a port of 127.0.0.1 (UDP and TCP) until t ends.
func serve(t *testing.T, srv *embedded.Server) string {
	t.Helper()
	var pc net.PacketConn
	var ln net.Listener
	for range 20 {
		var err error
		if pc, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		if ln, err = net.Listen("tcp", pc.LocalAddr().String()); err == nil {
			break
		}
		pc.Close()
		pc = nil
	}
	if pc == nil {
		t.Fatal("no port free for both UDP and TCP")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, pc, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return pc.LocalAddr().String()
}
