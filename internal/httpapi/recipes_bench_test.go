package httpapi_test

import (
	"io"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/testenv"
)

// BenchmarkListRecipes lists an account's recipes at the default quota, each with the
// largest script (50 × 64 KiB), ten lists at a time: peak-heap-MB is the most the
// process held live meanwhile (sampled), what a streamed list keeps low.
func BenchmarkListRecipes(b *testing.B) {
	env := testenv.New(b, testenv.Options{RateLimit: 1 << 30})
	a := env.NewAccount("en", "", "")
	script := "#!/bin/sh\n" + strings.Repeat("#", 64<<10-len("#!/bin/sh\n"))
	for range 50 {
		a.Do("POST", "/recipes", map[string]any{"name": uniqueName("r"), "script": script}).Want(b, 201)
	}
	req, _ := http.NewRequest("GET", env.URL+"/recipes", nil)
	req.Header.Set("Authorization", "Bearer "+a.Token)
	runtime.GC()
	stop, peak := make(chan struct{}), make(chan uint64)
	go func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var most uint64
		for {
			select {
			case <-stop:
				peak <- most
				return
			case <-time.After(time.Millisecond):
			}
			metrics.Read(sample)
			most = max(most, sample[0].Value.Uint64())
		}
	}()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		var wg sync.WaitGroup
		for range 10 {
			wg.Go(func() {
				resp, err := http.DefaultClient.Do(req.Clone(req.Context()))
				if err != nil {
					b.Error(err)
					return
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || n < 50*64<<10 {
					b.Errorf("list: %d, %d bytes", resp.StatusCode, n)
				}
			})
		}
		wg.Wait()
	}
	b.StopTimer()
	close(stop)
	b.ReportMetric(float64(<-peak)/(1<<20), "peak-heap-MB")
}
