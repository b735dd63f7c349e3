package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/testenv"
)

// metricsBody is the body of GET /servers/{id}/metrics.
type metricsBody struct {
	Data struct {
		Range       string       `json:"range"`
		StepSeconds int64        `json:"step_seconds"`
		CPU         [][2]float64 `json:"cpu"`
		Network     struct {
			In  [][2]float64 `json:"in"`
			Out [][2]float64 `json:"out"`
		} `json:"network"`
		Disk struct {
			Read  [][2]float64 `json:"read"`
			Write [][2]float64 `json:"write"`
		} `json:"disk"`
	} `json:"data"`
}

func TestContractMetrics(t *testing.T) {
	t.Parallel()
	env := testenv.New(t) // sampling every 60 ms
	a := env.NewAccount("en", "100", "")
	de := env.NewAccount("de", "100", "")
	srv := runningServer(t, a)
	id, name := itoa(num(t, srv["id"])), srv["name"].(string)

	// Wait for the first samples (a baseline, then a rate every interval).
	var m metricsBody
	deadline := time.Now().Add(20 * time.Second)
	for {
		a.Do("GET", "/servers/"+id+"/metrics", nil).Want(t, 200).JSON(t, &m)
		if len(m.Data.CPU) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no metrics 20 s after the server runs")
		}
		time.Sleep(100 * time.Millisecond)
	}

	t.Run("every range", func(t *testing.T) {
		// At the test scale the interval is 60 ms, so the range alone sets the step.
		for _, tc := range []struct {
			query, rng string
			step       int64
		}{
			{"", "1h", 10}, {"?range=1h", "1h", 10}, {"?range=6h", "6h", 60}, {"?range=24h", "24h", 240}, {"?range=7d", "7d", 1680},
		} {
			for _, ref := range []string{id, name} {
				var m metricsBody
				a.Do("GET", "/servers/"+ref+"/metrics"+tc.query, nil).Want(t, 200).JSON(t, &m)
				d := m.Data
				if d.Range != tc.rng || d.StepSeconds != tc.step {
					t.Errorf("%s: range %q step %d, want %q %d", tc.query, d.Range, d.StepSeconds, tc.rng, tc.step)
				}
				series := [][][2]float64{d.CPU, d.Network.In, d.Network.Out, d.Disk.Read, d.Disk.Write}
				if len(d.CPU) == 0 || len(d.CPU) > 360 {
					t.Fatalf("%s: %d points", tc.query, len(d.CPU))
				}
				now := float64(time.Now().Unix())
				for i, p := range d.CPU {
					if p[1] < 0 || p[1] > 100 || p[0] > now || int64(p[0])%tc.step != 0 || (i > 0 && p[0] <= d.CPU[i-1][0]) {
						t.Errorf("%s: cpu point %d = %v", tc.query, i, p)
					}
					for _, s := range series[1:] {
						if len(s) != len(d.CPU) || s[i][0] != p[0] || s[i][1] < 0 {
							t.Fatalf("%s: series out of step with cpu at %d: %v", tc.query, i, s)
						}
					}
				}
				// Some step has traffic. Not necessarily the first: the samples taken
				// while the machine was being made and booted have none, and when
				// those fall just before a step's boundary (the steps are aligned to
				// the clock), the first step holds nothing else.
				traffic := false
				for i := range d.Network.In {
					traffic = traffic || d.Network.In[i][1] > 0 || d.Network.Out[i][1] > 0
				}
				if !traffic {
					t.Errorf("%s: a running server without traffic: %v", tc.query, d.Network)
				}
			}
		}
	})

	t.Run("bad range", func(t *testing.T) {
		for _, q := range []string{"2h", "", "7D", "1d", "60m", "1h,6h"} {
			e := wantInvalid(t, a.Do("GET", "/servers/"+id+"/metrics?range="+q, nil), "range")
			if e.Errors["range"][0] != msg("en", "validation.metrics_range") || e.Message != e.Errors["range"][0] {
				t.Errorf("range %q: %+v", q, e)
			}
		}
	})

	t.Run("bad range in German", func(t *testing.T) {
		ds := runningServer(t, de)
		e := wantInvalid(t, de.Do("GET", "/servers/"+ds["name"].(string)+"/metrics?range=1w", nil), "range")
		if want := msg("de", "validation.metrics_range"); e.Errors["range"][0] != want || want == msg("en", "validation.metrics_range") {
			t.Errorf("German: %q, want %q", e.Errors["range"][0], want)
		}
	})

	t.Run("not found before the range", func(t *testing.T) {
		for _, ref := range []string{"999999", "server-zzzzzz", "abc", "0"} {
			wantNotFound(t, a.Do("GET", "/servers/"+ref+"/metrics", nil))
			wantNotFound(t, a.Do("GET", "/servers/"+ref+"/metrics?range=2h", nil))
		}
		// Another account's server, by id and by name, whatever the range.
		for _, ref := range []string{id, name} {
			wantNotFound(t, de.Do("GET", "/servers/"+ref+"/metrics", nil))
			wantNotFound(t, de.Do("GET", "/servers/"+ref+"/metrics?range=bad", nil))
		}
	})

	t.Run("suspended server still answers", func(t *testing.T) {
		ctx := context.Background()
		if _, err := env.App.Service.SetServerSuspended(ctx, num(t, srv["id"]), true); err != nil {
			t.Fatal(err)
		}
		a.Do("GET", "/servers/"+id+"/metrics?range=24h", nil).Want(t, http.StatusOK)
		if _, err := env.App.Service.SetServerSuspended(ctx, num(t, srv["id"]), false); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("deleted server", func(t *testing.T) {
		s := runningServer(t, a)
		a.Do("DELETE", "/servers/"+s["name"].(string), nil).Want(t, http.StatusNoContent)
		wantNotFound(t, a.Do("GET", "/servers/"+s["name"].(string)+"/metrics", nil))
	})

	t.Run("unauthenticated", func(t *testing.T) {
		wantError(t, env.Do("", "GET", "/servers/"+id+"/metrics", nil, nil), http.StatusUnauthorized, "unauthenticated")
		wantError(t, env.Do("berth_nope", "GET", "/servers/"+id+"/metrics?range=bad", nil, nil), http.StatusUnauthorized, "unauthenticated")
	})
}
