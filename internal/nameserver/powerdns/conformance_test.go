package powerdns

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/nameserver"
	"github.com/berthhq/berth/internal/nameserver/nameservertest"
	"github.com/berthhq/berth/internal/nameserver/powerdns/powerdnstest"
)

// TestConformance: PowerDNS behind this driver passes the suite the embedded server
// passes (docs/api.md, Domains, "Serving"): the two drivers answer alike over DNS.
// The suite publishes from parallel subtests, and the test's gsqlite3 backend
// answers a write that meets another with 500 ("database is locked"): each publish
// is retried as berthd's job retries a retryable error.
func TestConformance(t *testing.T) {
	t.Parallel()
	nameservertest.Exercise(t, func(t *testing.T, o nameservertest.Options) (nameserver.Publisher, string) {
		var allow []string
		for _, p := range o.AllowTransfer {
			allow = append(allow, p.String())
		}
		srv := powerdnstest.Start(t, powerdnstest.Options{AllowAXFR: allow})
		return retrying{newClient(t, srv, srv.APIKey)}, srv.DNSAddr
	})
}

// retrying is a Publisher that retries a retryable error a few times, 50 ms apart.
type retrying struct{ p nameserver.Publisher }

func (r retrying) Publish(ctx context.Context, z nameserver.Zone) error {
	return retry(func() error { return r.p.Publish(ctx, z) })
}

func (r retrying) Withdraw(ctx context.Context, name string) error {
	return retry(func() error { return r.p.Withdraw(ctx, name) })
}

func retry(f func() error) error {
	var err error
	for range 20 {
		if err = f(); !errors.Is(err, ErrRetryable) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
	return err
}
