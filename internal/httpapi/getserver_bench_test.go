package httpapi_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/asynclog"
	"github.com/berthhq/berth/internal/testenv"
)

// BenchmarkGetServer is GET /v1/servers/{id} through the whole server (HTTP, the
// dispatcher, authentication and rate limit, the store), one request at a time on a
// kept-alive connection, and with parallel clients: what a request costs, and what
// the request id and the request log add to it. allocs/op counts the client's side
// too. log=off is a logger that takes no Info line (no request log); log=async is
// berthd's: JSON through asynclog (to io.Discard here); log=sync is JSON written to
// /dev/null by the request itself (a system call per line), for comparison.
func BenchmarkGetServer(b *testing.B) {
	logw := asynclog.New(io.Discard, 0)
	defer logw.Close()
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer devNull.Close()
	for _, mode := range []struct {
		name string
		log  *slog.Logger
	}{
		{"log=off", slog.New(slog.DiscardHandler)},
		{"log=async", asynclog.JSONLogger(logw)},
		{"log=sync", slog.New(slog.NewJSONHandler(devNull, nil))},
	} {
		env := testenv.New(b, testenv.Options{RateLimit: 1 << 30, Logger: mode.log})
		a := env.NewAccount("en", "", "")
		srv := runningServer(b, a)
		req, _ := http.NewRequest("GET", fmt.Sprintf("%s/servers/%d", env.URL, int64(srv["id"].(float64))), nil)
		req.Header.Set("Authorization", "Bearer "+a.Token)
		req.Header.Set("Accept", "application/json")
		get := func(c *http.Client) {
			resp, err := c.Do(req.Clone(req.Context()))
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Errorf("status %d", resp.StatusCode)
			}
		}
		b.Run(mode.name+"/serial", func(b *testing.B) {
			c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			defer c.CloseIdleConnections()
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				get(c)
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
		})
		b.Run(mode.name+"/parallel", func(b *testing.B) {
			c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			defer c.CloseIdleConnections()
			b.ReportAllocs()
			b.SetParallelism(4)
			b.ResetTimer()
			cpu := cpuTime()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					get(c)
				}
			})
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
		})
		env.Close()
	}
}

// cpuTime is the processor time the process used so far (user and system, every
// thread): per request, a figure that other work on a shared machine disturbs less
// than ns/op. It counts the client's and Berth's background work too.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
