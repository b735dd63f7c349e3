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
	At        time.Time // stored to the second
	CPU       float64   // percent of the server's vCPUs, 0–100 (stored to 0.01)
	NetIn     int64     // bytes per second received
	NetOut    int64     // bytes per second sent
	DiskRead  int64     // bytes per second
	DiskWrite int64     // bytes per second
}

// Store keeps samples. sqlstore.DB implements it.
type Store interface {
	// MetricTargets lists every live server (not deleted) with its machine's name.
	MetricTargets(ctx context.Context) ([]Target, error)
	// AddMetricSamples writes samples in one transaction; a sample for a server and
	// second that exists already replaces it.
	AddMetricSamples(ctx context.Context, samples []Sample) error
	// PruneMetricSamples deletes every sample older than before and reports how many.
	PruneMetricSamples(ctx context.Context, before time.Time) (int64, error)
	// MetricSamples lists a server's samples with from <= At < to, oldest first.
	MetricSamples(ctx context.Context, serverID int64, from, to time.Time) ([]Sample, error)
	// MetricBuckets averages a server's samples with from <= At < to into buckets of
	// step seconds aligned to multiples of step, oldest first, leaving out empty
	// buckets: Downsample(MetricSamples(...), step), done where the data is.
	MetricBuckets(ctx context.Context, serverID int64, from, to time.Time, step int64) ([]Bucket, error)
}

// Bucket is the average of the samples in [At, At+step).
type Bucket struct {
	At                                      int64 // Unix seconds
	CPU, NetIn, NetOut, DiskRead, DiskWrite float64
}
