// Package metrics records and answers the CPU, network and disk load of servers: a
// sampler reads every live machine's counters from the compute driver at a fixed
// interval and stores one sample of rates per server; a reader answers a time range
// as series of at most MaxPoints points, averaged into buckets.
package metrics

import (
	"context"
	"time"
)

// Interval is the sampling interval at --sim-time-scale 1.
const Interval = 60 * time.Second

// Retention is how long samples are kept.
const Retention = 7 * 24 * time.Hour

// MaxPoints bounds the points of one series.
const MaxPoints = 360

// Target is a server whose machine is sampled.
type Target struct {
	ServerID  int64
	AccountID int64  // the server's owner (whose clock its samples' times are on)
	Name      string // the machine's name
}

// Sample is one server's load over the sampling interval that ends at At.
type Sample struct {
	ServerID  int64
	AccountID int64     // the server's owner (a label where the backend keeps labels; the SQL store does not keep it)
	At        time.Time // stored to the second
	CPU       float64   // percent of the server's vCPUs, 0–100 (stored to 0.01)
	NetIn     int64     // bytes per second received
	NetOut    int64     // bytes per second sent
	DiskRead  int64     // bytes per second
	DiskWrite int64     // bytes per second
}

// Backend keeps samples and answers them: what the sampler (and a sandbox clock's
// backfill) writes and what GET /servers/{id}/metrics reads. The SQL store
// (sqlstore.DB, the embedded default) is one; VictoriaMetrics (package
// metrics/victoria) is another, for installations whose samples outgrow one SQL
// database. Every backend passes the suite in metrics/metricstest.
type Backend interface {
	// AddMetricSamples writes samples; a sample for a server and second that exists
	// already replaces it (metricstest.Options.KeepsOneOfSameSecond tells the backends
	// that keep one of them instead).
	AddMetricSamples(ctx context.Context, samples []Sample) error
	// PruneMetricSamples deletes every sample older than before and reports how many
	// (0 from a backend whose own retention ages samples out).
	PruneMetricSamples(ctx context.Context, before time.Time) (int64, error)
	// MetricSamples lists a server's samples with from <= At < to, oldest first, one
	// a second.
	MetricSamples(ctx context.Context, serverID int64, from, to time.Time) ([]Sample, error)
	// MetricBuckets averages a server's samples with from <= At < to into buckets of
	// step seconds aligned to multiples of step, oldest first, leaving out empty
	// buckets: Downsample(MetricSamples(...), step), done where the data is when the
	// backend can.
	MetricBuckets(ctx context.Context, serverID int64, from, to time.Time, step int64) ([]Bucket, error)
}

// Targets lists the servers to sample: the SQL store, whichever Backend keeps the
// samples.
type Targets interface {
	// MetricTargets lists every live server (not deleted) with its machine's name,
	// by id.
	MetricTargets(ctx context.Context) ([]Target, error)
	// MetricTargetsAfter lists the live servers with an id above after, by id: those
	// made since a MetricTargets (ids grow in creation order).
	MetricTargetsAfter(ctx context.Context, after int64) ([]Target, error)
}

// Store is the SQL store's side of metrics: the targets and a Backend. sqlstore.DB
// implements it.
type Store interface {
	Targets
	Backend
}

// Bucket is the average of the samples in [At, At+step).
type Bucket struct {
	At                                      int64 // Unix seconds
	CPU, NetIn, NetOut, DiskRead, DiskWrite float64
}
