package telemetry

import (
	"context"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// Series computed at scrape time, from the database and the compute driver: what
// they show is the state now, whichever process is scraped.

// scrapeTimeout bounds the reads of one scrape.
const scrapeTimeout = 10 * time.Second

// Store is what the scrape-time series are read from (store.Store is one).
type Store interface {
	JobQueue(ctx context.Context) (store.JobQueue, error)
	ServersByStatus(ctx context.Context) (map[hosting.Status]int, error)
	EarliestDue(ctx context.Context, upto time.Time, account int64) (*time.Time, error)
}

var (
	queueDepthDesc = prometheus.NewDesc("berth_job_queue_depth",
		"Jobs not finished, by state: available (waiting for a worker), running, retryable (waiting for their next attempt). Their sum is the queue's depth.",
		[]string{"state"}, nil)
	queueOldestDesc = prometheus.NewDesc("berth_job_queue_oldest_available_seconds",
		"How long the longest-waiting available job has waited for a worker (0: none waits).", nil, nil)
	meterLagDesc = prometheus.NewDesc("berth_metering_lag_seconds",
		"Seconds since the start of the earliest hour due to be charged (0: every hour started is charged).", nil, nil)
	serversDesc = prometheus.NewDesc("berth_servers",
		"Live servers by the status their owners see (suspended over the machine's status).", []string{"status"}, nil)
)

// WatchStore adds the series read from st at every scrape: the job queue, the
// servers by status and the metering lag, the latter by now, the clock billing
// runs on (nil: the system's). unwatch removes them (before st closes). It fails
// when a store is watched already.
func (m *Metrics) WatchStore(st Store, now func() time.Time) (unwatch func(), err error) {
	if m == nil {
		return func() {}, nil
	}
	if now == nil {
		now = time.Now
	}
	c := &scrapeCollector{descs: []*prometheus.Desc{queueDepthDesc, queueOldestDesc, meterLagDesc, serversDesc},
		collect: func(ctx context.Context, ch chan<- prometheus.Metric) {
			collectQueue(ctx, ch, st)
			collectServers(ctx, ch, st)
			collectMeterLag(ctx, ch, st, now())
		}}
	return m.watch(c)
}

func collectQueue(ctx context.Context, ch chan<- prometheus.Metric, st Store) {
	q, err := st.JobQueue(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(queueDepthDesc, err)
		return
	}
	for state, n := range map[string]int{"available": q.Available, "running": q.Running, "retryable": q.Retryable} {
		ch <- prometheus.MustNewConstMetric(queueDepthDesc, prometheus.GaugeValue, float64(n), state)
	}
	age := 0.0
	if q.OldestAvailable != nil {
		// River's times are the system clock's.
		age = max(time.Since(*q.OldestAvailable).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(queueOldestDesc, prometheus.GaugeValue, age)
}

func collectServers(ctx context.Context, ch chan<- prometheus.Metric, st Store) {
	by, err := st.ServersByStatus(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(serversDesc, err)
		return
	}
	// Every status, at 0 when no server shows it, so that a series never vanishes.
	for _, s := range hosting.Statuses {
		if _, ok := by[s]; !ok {
			by[s] = 0
		}
	}
	for s, n := range by {
		ch <- prometheus.MustNewConstMetric(serversDesc, prometheus.GaugeValue, float64(n), string(s))
	}
}

func collectMeterLag(ctx context.Context, ch chan<- prometheus.Metric, st Store, now time.Time) {
	due, err := st.EarliestDue(ctx, now, 0)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(meterLagDesc, err)
		return
	}
	lag := 0.0
	if due != nil {
		lag = max(now.Sub(*due).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(meterLagDesc, prometheus.GaugeValue, lag)
}

// Host is a hypervisor host of the libvirt driver, as its series show it.
type Host struct {
	ID, LocationID int64
	// Address is the host part of its libvirt URI (no user, no parameters).
	Address string
	// What Berth may place there, and what is placed.
	VCPUs, UsedVCPUs       int
	MemoryMB, UsedMemoryMB int
	DiskGB, UsedDiskGB     int
	Machines               int
	Draining               bool
	// Reachable is false when Berth's last attempt to reach it failed.
	Reachable bool
}

var (
	hostLabels       = []string{"host", "location", "address"}
	hostCapacityDesc = prometheus.NewDesc("berth_libvirt_host_capacity",
		"What Berth may place on a libvirt host, by resource: vcpus, memory_bytes, disk_bytes.",
		append(hostLabels[:3:3], "resource"), nil)
	hostUsedDesc = prometheus.NewDesc("berth_libvirt_host_used",
		"What the machines on a libvirt host take of its capacity, by resource: vcpus, memory_bytes, disk_bytes.",
		append(hostLabels[:3:3], "resource"), nil)
	hostReachableDesc = prometheus.NewDesc("berth_libvirt_host_reachable",
		"1 unless Berth's last attempt to reach the libvirt host failed.", hostLabels, nil)
	hostMachinesDesc = prometheus.NewDesc("berth_libvirt_host_machines",
		"Machines on a libvirt host.", hostLabels, nil)
	hostDrainingDesc = prometheus.NewDesc("berth_libvirt_host_draining",
		"1 when no new machine is placed on the libvirt host.", hostLabels, nil)
)

// WatchHosts adds the series of the libvirt driver's hosts, listed by list at every
// scrape. unwatch removes them.
func (m *Metrics) WatchHosts(list func(ctx context.Context) ([]Host, error)) (unwatch func(), err error) {
	if m == nil {
		return func() {}, nil
	}
	c := &scrapeCollector{descs: []*prometheus.Desc{hostCapacityDesc, hostUsedDesc, hostReachableDesc, hostMachinesDesc, hostDrainingDesc},
		collect: func(ctx context.Context, ch chan<- prometheus.Metric) {
			hosts, err := list(ctx)
			if err != nil {
				ch <- prometheus.NewInvalidMetric(hostCapacityDesc, err)
				return
			}
			const mib, gib = 1 << 20, 1 << 30
			for _, h := range hosts {
				l := []string{strconv.FormatInt(h.ID, 10), strconv.FormatInt(h.LocationID, 10), h.Address}
				for _, r := range []struct {
					name      string
					cap, used float64
				}{
					{"vcpus", float64(h.VCPUs), float64(h.UsedVCPUs)},
					{"memory_bytes", float64(h.MemoryMB) * mib, float64(h.UsedMemoryMB) * mib},
					{"disk_bytes", float64(h.DiskGB) * gib, float64(h.UsedDiskGB) * gib},
				} {
					ch <- prometheus.MustNewConstMetric(hostCapacityDesc, prometheus.GaugeValue, r.cap, append(l[:3:3], r.name)...)
					ch <- prometheus.MustNewConstMetric(hostUsedDesc, prometheus.GaugeValue, r.used, append(l[:3:3], r.name)...)
				}
				ch <- prometheus.MustNewConstMetric(hostReachableDesc, prometheus.GaugeValue, b2f(h.Reachable), l...)
				ch <- prometheus.MustNewConstMetric(hostMachinesDesc, prometheus.GaugeValue, float64(h.Machines), l...)
				ch <- prometheus.MustNewConstMetric(hostDrainingDesc, prometheus.GaugeValue, b2f(h.Draining), l...)
			}
		}}
	return m.watch(c)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func (m *Metrics) watch(c *scrapeCollector) (func(), error) {
	if err := m.reg.Register(c); err != nil {
		return nil, err
	}
	return func() { m.reg.Unregister(c) }, nil
}

// scrapeCollector computes its series when scraped.
type scrapeCollector struct {
	descs   []*prometheus.Desc
	collect func(ctx context.Context, ch chan<- prometheus.Metric)
}

func (c *scrapeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c *scrapeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	c.collect(ctx, ch)
}
