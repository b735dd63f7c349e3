package telemetry_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/telemetry"
)

// TestDocsListEveryMetric: docs/operating.md lists every berth_* family with exactly
// its labels, and the Grafana dashboard asks only for families that exist.
func TestDocsListEveryMetric(t *testing.T) {
	t.Parallel()
	m := telemetry.New(quiet())
	now := time.Now()
	if _, err := m.WatchStore(fakeStore{q: store.JobQueue{Available: 1, OldestAvailable: &now}, by: map[hosting.Status]int{}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := m.WatchHosts(func(context.Context) ([]telemetry.Host, error) { return []telemetry.Host{{ID: 1, LocationID: 1}}, nil }); err != nil {
		t.Fatal(err)
	}
	m.OperationFinished(hosting.OpProvision, hosting.OpSuccess, time.Second)
	m.MeterPassed(time.Second, nil)
	m.SignInFailed()
	m.DNSPublished(nil)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /x", func(http.ResponseWriter, *http.Request) {})
	m.Instrument(telemetry.SurfaceAPI, mux).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/x", nil))

	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string][]string{} // family → its labels, sorted
	for _, f := range fams {
		if !strings.HasPrefix(f.GetName(), "berth_") {
			continue
		}
		var labels []string
		for _, l := range f.Metric[0].Label {
			labels = append(labels, l.GetName())
		}
		slices.Sort(labels)
		have[f.GetName()] = labels
	}

	doc, err := os.ReadFile("../../docs/operating.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `(berth_[a-z_]+)` \\| [a-z]+ \\| ([^|]*) \\|")
	label := regexp.MustCompile("`([a-z_]+)`")
	documented := map[string]bool{}
	for _, r := range row.FindAllStringSubmatch(string(doc), -1) {
		name := r[1]
		documented[name] = true
		var labels []string
		for _, l := range label.FindAllStringSubmatch(r[2], -1) {
			labels = append(labels, l[1])
		}
		slices.Sort(labels)
		got, ok := have[name]
		if !ok {
			t.Errorf("docs/operating.md lists %s, which Berth does not export", name)
			continue
		}
		if !slices.Equal(got, labels) {
			t.Errorf("docs/operating.md: %s has labels %v, Berth exports %v", name, labels, got)
		}
	}
	for name := range have {
		if !documented[name] {
			t.Errorf("%s is not listed in docs/operating.md", name)
		}
	}

	dash, err := os.ReadFile("../../docs/grafana-berth.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range regexp.MustCompile(`berth_[a-z_]+`).FindAllString(string(dash), -1) {
		base := name
		for _, suffix := range []string{"_bucket", "_count", "_sum"} {
			if b, ok := strings.CutSuffix(name, suffix); ok && have[b] != nil {
				base = b
			}
		}
		if _, ok := have[base]; !ok {
			t.Errorf("docs/grafana-berth.json asks for %s, which Berth does not export", name)
		}
	}
}
