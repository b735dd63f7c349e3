package httpapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/metrics/victoria"
	"github.com/berthhq/berth/internal/metrics/victoria/victoriatest"
	"github.com/berthhq/berth/internal/testenv"
)

// TestMetricsInVictoriaMetrics: a Berth serving with --metrics-url keeps its
// servers' samples in VictoriaMetrics, not in the database, and GET
// /servers/{id}/metrics charts them (every answer checked against the OpenAPI
// document by the harness): points in step across the five series, on the range's
// buckets, as the database's would be.
func TestMetricsInVictoriaMetrics(t *testing.T) {
	t.Parallel()
	vm := victoriatest.Start(t)
	env := testenv.New(t, testenv.Options{MetricsURL: vm.URL}) // sampling every 60 ms
	a := env.NewAccount("en", "100", "")
	srv := runningServer(t, a)
	id := itoa(num(t, srv["id"]))

	var m metricsBody
	deadline := time.Now().Add(30 * time.Second)
	for {
		a.Do("GET", "/servers/"+id+"/metrics", nil).Want(t, 200).JSON(t, &m)
		if len(m.Data.CPU) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d points 30 s after the server runs; want 2 or more", len(m.Data.CPU))
		}
		time.Sleep(200 * time.Millisecond)
	}
	d := m.Data
	if d.Range != "1h" || d.StepSeconds != 10 {
		t.Fatalf("range %q step %d, want 1h and 10", d.Range, d.StepSeconds)
	}
	series := [][][2]float64{d.CPU, d.Network.In, d.Network.Out, d.Disk.Read, d.Disk.Write}
	now := float64(time.Now().Unix())
	for i, p := range d.CPU {
		if p[1] < 0 || p[1] > 100 || p[0] > now || int64(p[0])%10 != 0 || (i > 0 && p[0] <= d.CPU[i-1][0]) {
			t.Errorf("cpu point %d = %v", i, p)
		}
		for _, s := range series[1:] {
			if len(s) != len(d.CPU) || s[i][0] != p[0] || s[i][1] < 0 {
				t.Fatalf("series out of step with cpu at %d: %v", i, s)
			}
		}
	}

	// The samples are VictoriaMetrics', none the database's.
	ctx := context.Background()
	var rows int
	if err := env.App.DB.WriteDB().QueryRowContext(ctx, `SELECT COUNT(*) FROM metric_samples`).Scan(&rows); err != nil || rows != 0 {
		t.Errorf("metric_samples holds %d rows (%v); want none with --metrics-url", rows, err)
	}
	b, err := victoria.New(vm.URL)
	if err != nil {
		t.Fatal(err)
	}
	samples, err := b.MetricSamples(ctx, num(t, srv["id"]), time.Now().Add(-time.Hour), time.Now().Add(time.Minute))
	if err != nil || len(samples) < len(d.CPU) {
		t.Fatalf("VictoriaMetrics holds %d samples of the server (%v); want at least the %d points' worth", len(samples), err, len(d.CPU))
	}
}
