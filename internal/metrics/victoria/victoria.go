// Package victoria keeps metrics samples in VictoriaMetrics (Debian's
// victoria-metrics), for installations whose samples outgrow the SQL store: about
// 45 KiB a server a day there, 45 GB a day at a million servers. It writes through
// Prometheus remote write (POST /api/v1/write: a snappy-compressed protobuf
// WriteRequest) and reads through the export API (GET /api/v1/export: the raw
// samples), averaging them into buckets as metrics.Downsample does, so that
// GET /servers/{id}/metrics answers what the SQL store would (metricstest).
//
// A sample is five series at its second, each labelled with the server and its
// account:
//
//	berth_server_cpu_percent{server="12",account="3"}
//	berth_server_network_receive_bytes_per_second{...}
//	berth_server_network_transmit_bytes_per_second{...}
//	berth_server_disk_read_bytes_per_second{...}
//	berth_server_disk_write_bytes_per_second{...}
//
// Retention is VictoriaMetrics' own (-retentionPeriod, at least the 7 days the
// charts show): PruneMetricSamples removes nothing. VictoriaMetrics takes no sample
// more than 2 days ahead of its clock, so a sandbox account's test clock advanced
// further than that charts nothing (serve --sandbox is for the SQL store).
package victoria

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/klauspost/compress/snappy"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/berthhq/berth/internal/metrics"
)

// Series names, in the order of metric below.
var names = [...]string{
	"berth_server_cpu_percent",
	"berth_server_network_receive_bytes_per_second",
	"berth_server_network_transmit_bytes_per_second",
	"berth_server_disk_read_bytes_per_second",
	"berth_server_disk_write_bytes_per_second",
}

// match selects every series of a server (the server label is the key; the account
// label only tells).
const match = `{__name__=~"berth_server_(cpu_percent|network_receive_bytes_per_second|network_transmit_bytes_per_second|disk_read_bytes_per_second|disk_write_bytes_per_second)",server="%d"}`

// metric is the value of series i of a sample, as stored: CPU to 0.01 in 0–100 (as
// the SQL store keeps it), the rates whole bytes per second.
func metric(s metrics.Sample, i int) float64 {
	switch i {
	case 0:
		return math.Round(min(max(s.CPU, 0), 100)*100) / 100
	case 1:
		return float64(s.NetIn)
	case 2:
		return float64(s.NetOut)
	case 3:
		return float64(s.DiskRead)
	default:
		return float64(s.DiskWrite)
	}
}

// setMetric sets series i's value v on s.
func setMetric(s *metrics.Sample, i int, v float64) {
	switch i {
	case 0:
		s.CPU = v
	case 1:
		s.NetIn = int64(math.Round(v))
	case 2:
		s.NetOut = int64(math.Round(v))
	case 3:
		s.DiskRead = int64(math.Round(v))
	default:
		s.DiskWrite = int64(math.Round(v))
	}
}

// Chunk is how many samples one remote write carries (five series each): a round
// of a million servers is 200 requests of about 1 MB before compression, not one of
// 200 MB.
const Chunk = 5000

// Backend is a metrics.Backend in VictoriaMetrics.
type Backend struct {
	write, export, health string
	client                *http.Client
}

var _ metrics.Backend = (*Backend)(nil)

// New returns the backend of the VictoriaMetrics at base ("http://127.0.0.1:8428";
// a path is kept, for one behind a proxy).
func New(base string) (*Backend, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("metrics url %q: want http://host:port of a VictoriaMetrics", base)
	}
	return &Backend{write: u.JoinPath("api/v1/write").String(), export: u.JoinPath("api/v1/export").String(), health: u.JoinPath("health").String(),
		client: &http.Client{Timeout: 30 * time.Second}}, nil
}

// Ping tells whether VictoriaMetrics answers (GET /health).
func (b *Backend) Ping(ctx context.Context) error {
	resp, err := b.get(ctx, b.health)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// AddMetricSamples implements metrics.Backend: remote writes of Chunk samples. Of
// two samples of one server and second VictoriaMetrics keeps, per series, either
// (it has no update; metricstest.Options.KeepsOneOfSameSecond).
func (b *Backend) AddMetricSamples(ctx context.Context, samples []metrics.Sample) error {
	for len(samples) > 0 {
		n := min(len(samples), Chunk)
		if err := b.post(ctx, snappy.Encode(nil, WriteRequest(samples[:n]))); err != nil {
			return err
		}
		samples = samples[n:]
	}
	return nil
}

// WriteRequest is samples as Prometheus remote write's WriteRequest, in protobuf:
//
//	message WriteRequest { repeated TimeSeries timeseries = 1; }
//	message TimeSeries { repeated Label labels = 1; repeated Sample samples = 2; }
//	message Label { string name = 1; string value = 2; }
//	message Sample { double value = 1; int64 timestamp = 2; } // Unix ms
//
// It is encoded with protowire rather than Prometheus' prompb: prompb lives in the
// github.com/prometheus/prometheus module (v0.316: with gogo/protobuf, unmaintained
// since 2021, and 336 module requirements in its graph) for four messages of seven
// fields; protowire is google.golang.org/protobuf's, which Berth has already. Labels
// are sorted by name, as remote write asks.
func WriteRequest(samples []metrics.Sample) []byte {
	out := make([]byte, 0, len(samples)*len(names)*96)
	var ts, part []byte
	for _, s := range samples {
		server, account := strconv.FormatInt(s.ServerID, 10), strconv.FormatInt(s.AccountID, 10)
		for i, name := range names {
			ts = ts[:0]
			for _, l := range [...][2]string{{"__name__", name}, {"account", account}, {"server", server}} {
				part = protowire.AppendTag(part[:0], 1, protowire.BytesType)
				part = protowire.AppendString(part, l[0])
				part = protowire.AppendTag(part, 2, protowire.BytesType)
				part = protowire.AppendString(part, l[1])
				ts = protowire.AppendTag(ts, 1, protowire.BytesType)
				ts = protowire.AppendBytes(ts, part)
			}
			part = protowire.AppendTag(part[:0], 1, protowire.Fixed64Type)
			part = protowire.AppendFixed64(part, math.Float64bits(metric(s, i)))
			part = protowire.AppendTag(part, 2, protowire.VarintType)
			part = protowire.AppendVarint(part, uint64(s.At.Unix()*1000))
			ts = protowire.AppendTag(ts, 2, protowire.BytesType)
			ts = protowire.AppendBytes(ts, part)
			out = protowire.AppendTag(out, 1, protowire.BytesType)
			out = protowire.AppendBytes(out, ts)
		}
	}
	return out
}

func (b *Backend) post(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.write, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("Content-Encoding", "snappy")
	req.Header.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	resp, err := b.client.Do(req)
	if err != nil {
		return fmt.Errorf("victoriametrics write: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("victoriametrics write: %s: %s", resp.Status, snippet(resp.Body))
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return nil
}

// PruneMetricSamples implements metrics.Backend: VictoriaMetrics drops what is
// older than its -retentionPeriod by itself.
func (b *Backend) PruneMetricSamples(context.Context, time.Time) (int64, error) { return 0, nil }

// MetricSamples implements metrics.Backend: the raw samples of the server's five
// series (GET /api/v1/export), one a second.
func (b *Backend) MetricSamples(ctx context.Context, serverID int64, from, to time.Time) ([]metrics.Sample, error) {
	if !to.After(from) {
		return nil, nil
	}
	first, last := from.Unix(), to.Unix()-1 // whole seconds: [from, to)
	if from.Truncate(time.Second).Before(from) {
		first++
	}
	if first > last {
		return nil, nil
	}
	q := url.Values{"match[]": {fmt.Sprintf(match, serverID)}, "start": {strconv.FormatInt(first, 10)}, "end": {strconv.FormatInt(last, 10)}}
	resp, err := b.get(ctx, b.export+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	// A server's series, by second: the account label may have changed, and a
	// second written twice may be there twice (no deduplication asked): one wins.
	bySecond := map[int64]*metrics.Sample{}
	dec := json.NewDecoder(bufio.NewReader(resp.Body))
	for {
		var line struct {
			Metric     map[string]string `json:"metric"`
			Values     []float64         `json:"values"`
			Timestamps []int64           `json:"timestamps"`
		}
		if err := dec.Decode(&line); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("victoriametrics export: %w", err)
		}
		i := slices.Index(names[:], line.Metric["__name__"])
		if i < 0 || len(line.Values) != len(line.Timestamps) {
			continue
		}
		for k, ms := range line.Timestamps {
			sec := ms / 1000
			if ms%1000 != 0 || sec < first || sec > last {
				continue // not a sample of Berth's (written to the second), or outside
			}
			s := bySecond[sec]
			if s == nil {
				s = &metrics.Sample{ServerID: serverID, At: time.Unix(sec, 0).UTC()}
				bySecond[sec] = s
			}
			setMetric(s, i, line.Values[k])
		}
	}
	out := make([]metrics.Sample, 0, len(bySecond))
	for _, s := range bySecond {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b metrics.Sample) int { return a.At.Compare(b.At) })
	return out, nil
}

// MetricBuckets implements metrics.Backend: Downsample of the raw samples. (A 7d
// chart moves a server's 10,080 samples of five series out of VictoriaMetrics,
// about 1 MB of JSON; its rollups would move 360 points, but average over
// (t-step, t] after a lookback and hold the last 30 s back (-search.latencyOffset),
// so they answer other buckets than the SQL store's.)
func (b *Backend) MetricBuckets(ctx context.Context, serverID int64, from, to time.Time, step int64) ([]metrics.Bucket, error) {
	if step <= 0 {
		return nil, fmt.Errorf("metric buckets: step %d", step)
	}
	samples, err := b.MetricSamples(ctx, serverID, from, to)
	if err != nil {
		return nil, err
	}
	return metrics.Downsample(samples, step), nil
}

func (b *Backend) get(ctx context.Context, u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("victoriametrics: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return nil, fmt.Errorf("victoriametrics %s: %s: %s", req.URL.Path, resp.Status, snippet(resp.Body))
	}
	return resp, nil
}

func snippet(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, 512))
	return string(bytes.TrimSpace(b))
}
