package victoria_test

import (
	"testing"

	"github.com/berthhq/berth/internal/metrics/metricstest"
	"github.com/berthhq/berth/internal/metrics/victoria"
	"github.com/berthhq/berth/internal/metrics/victoria/victoriatest"
)

// TestConformance: VictoriaMetrics, written through remote write and read through
// its export API, passes the metrics conformance suite: the same samples give the
// same series as the SQL store. Its retention is its own, and of two samples of one
// server and second it keeps one (per series) rather than the last.
func TestConformance(t *testing.T) {
	t.Parallel()
	vm := victoriatest.Start(t)
	b, err := victoria.New(vm.URL)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
	metricstest.Run(t, b, metricstest.Options{Settle: vm.Flush, OwnRetention: true, KeepsOneOfSameSecond: true})
}
