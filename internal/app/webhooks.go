package app

import (
	"context"
	"net/netip"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/webhook"
)

// retryPolicy is River's retry schedule: a webhook delivery's on webhook.NextAttempt
// (docs/webhooks.md, "Retries": 5 s, 5 min, 30 min, ... 24 h after the attempt that
// failed), a DNS publish's on ops.DNSRetryWait (1 s doubling to a minute), a mail's
// on ops.MailRetryWait (30 s doubling to an hour), every other job's River's default.
type retryPolicy struct {
	river.DefaultClientRetryPolicy
}

// NextRetry implements river.ClientRetryPolicy.
func (p *retryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	var wait time.Duration
	switch job.Kind {
	case ops.WebhookDeliveryKind, ops.LicenseHookKind:
		wait, _ = webhook.NextAttempt(job.Attempt) // the last attempt is not retried: its worker ended it
	case ops.DNSPublishKind:
		wait = ops.DNSRetryWait(job.Attempt)
	case ops.MailKind:
		wait = ops.MailRetryWait(job.Attempt)
	default:
		return p.DefaultClientRetryPolicy.NextRetry(job)
	}
	from := time.Now().UTC()
	if job.AttemptedAt != nil {
		from = *job.AttemptedAt
	}
	return from.Add(wait)
}

// ownNetworks are the driver's own networks (compute.Networks), where no webhook
// delivers; none for a driver without them.
func (a *App) ownNetworks(ctx context.Context) ([]netip.Prefix, error) {
	n, ok := compute.As[compute.Networks](a.driver)
	if !ok {
		return nil, nil
	}
	return n.Networks(ctx)
}

// webhookOptions are the rules of webhooks' urls: private addresses allowed under
// --webhook-allow-private and in the sandbox.
func (a *App) webhookOptions() ops.WebhookOptions {
	return ops.WebhookOptions{AllowPrivate: a.cfg.WebhookAllowPrivate || a.cfg.Sandbox, OwnPools: a.ownNetworks}
}

// Job reads a job of the queue (tests follow a webhook delivery's schedule with it).
func (a *App) Job(ctx context.Context, id int64) (*rivertype.JobRow, error) {
	return a.jobs.JobGet(ctx, id)
}

// Jobs lists up to 1000 jobs of a kind, by id.
func (a *App) Jobs(ctx context.Context, kind string) ([]*rivertype.JobRow, error) {
	res, err := a.jobs.JobList(ctx, river.NewJobListParams().Kinds(kind).First(1000))
	if err != nil {
		return nil, err
	}
	return res.Jobs, nil
}

// RetryJob makes a job that waits for its next attempt available at once (tests skip
// a retry's wait with it).
func (a *App) RetryJob(ctx context.Context, id int64) error {
	_, err := a.jobs.JobRetry(ctx, id)
	return err
}
