// Command memdiag is `berthd serve` run in-process (wired as cmd/berthd/serve.go:
// app.Open, StartWorkers, the /v1 handler behind the same http.Server settings) that
// logs where its memory is, every -every, as JSON lines on stderr:
//
//   - "msg":"memdiag": resident memory from /proc; the Go runtime's memory classes,
//     goroutines and the most goroutines seen in between (runtime/metrics); what
//     modernc.org/libc's allocator (SQLite's C heap: page caches, statements, sorts)
//     has mapped and how many allocations are live (with -tags memory.counters, zeros
//     without); and that C heap walked region by region (cheap.go): slots in use per
//     size class, large allocations, the empty regions the allocator keeps for reuse,
//     each with what of it is resident (mincore).
//   - "msg":"memdiag_conns", once per pool (write, read): for each connection, what
//     sqlite3_db_status says its page cache, statements and schema hold, its page
//     cache's pages against its bound, and the pool's cache hits and misses since
//     the last line (conns.go). The pool's connections are all held meanwhile.
//
// SQLite's own sqlite3_memory_used is not available: modernc.org/sqlite is built
// without memory statistics.
//
// It is a drop-in for bench/soak's -berthd: `serve` runs here; every other command
// (admin ...) is handed to the real berthd named by $BERTHD. Used to find out which
// part of berthd's memory grows under the soak's load:
//
//	go build -o /tmp/berthd ./cmd/berthd
//	go build -tags memory.counters -o /tmp/memdiag ./bench/memdiag
//	BERTHD=/tmp/berthd go run ./bench/soak -berthd /tmp/memdiag -keep
//	grep '"memdiag"' /tmp/berth-soak.*/berthd.log
//
// MEMDIAG_PPROF=127.0.0.1:18302 also serves net/http/pprof there;
// MEMDIAG_MEMPROFILERATE=16384 makes its heap profiles finer (runtime.MemProfileRate).
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"modernc.org/libc"

	"github.com/berthhq/berth/internal/app"
)

func main() {
	if r, err := strconv.Atoi(os.Getenv("MEMDIAG_MEMPROFILERATE")); err == nil {
		runtime.MemProfileRate = r // finer heap profiles (net/http/pprof's heap)
	}
	args := os.Args[1:]
	i := slices.Index(args, "serve")
	if i < 0 {
		os.Exit(passThrough(args))
	}
	args = slices.Delete(slices.Clone(args), i, i+1)
	fs := flag.NewFlagSet("memdiag", flag.ExitOnError)
	data := fs.String("data", "data", "data directory")
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	scale := fs.Float64("sim-time-scale", 1, "sim driver time scale")
	rateLimit := fs.Int("rate-limit", 120, "requests per minute per token")
	every := fs.Duration("every", 10*time.Second, "how often to log the memory breakdown")
	_ = fs.Parse(args)
	if err := serve(*data, *addr, *scale, *rateLimit, *every); err != nil {
		fmt.Fprintln(os.Stderr, "memdiag:", err)
		os.Exit(1)
	}
}

// passThrough runs the real berthd with args and returns its exit code.
func passThrough(args []string) int {
	real := os.Getenv("BERTHD")
	if real == "" {
		fmt.Fprintln(os.Stderr, "memdiag: only serve runs here; set BERTHD to the berthd binary for the rest")
		return 2
	}
	cmd := exec.Command(real, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		fmt.Fprintln(os.Stderr, "memdiag:", err)
		return 1
	}
	return 0
}

func serve(data, addr string, scale float64, rateLimit int, every time.Duration) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	a, err := app.Open(ctx, app.Config{DataDir: data, Driver: "sim", SimTimeScale: scale, RateLimit: rateLimit, Logger: log})
	if err != nil {
		return err
	}
	defer a.Close(context.Background())
	if err := a.StartWorkers(ctx); err != nil {
		return err
	}
	h, err := a.Handler()
	if err != nil {
		return err
	}
	if pa := os.Getenv("MEMDIAG_PPROF"); pa != "" {
		pm := http.NewServeMux()
		pm.HandleFunc("/debug/pprof/", pprof.Index)
		pm.HandleFunc("/debug/pprof/profile", pprof.Profile)
		pm.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		go func() { log.Warn("memdiag: pprof", "err", http.ListenAndServe(pa, pm)) }()
	}
	go watchGoroutines(ctx)
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		start := time.Now()
		for {
			logMemory(log, time.Since(start))
			logConns(ctx, log, a, time.Since(start))
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	// The same settings as cmd/berthd/serve.go.
	srv := &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      90 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	go func() {
		<-ctx.Done()
		sh, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = srv.Shutdown(sh)
	}()
	log.Info("serving", "api", "http://"+addr+"/v1", "driver", "sim", "data", data, "memdiag", every.String())
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

var goMetrics = []string{
	"/memory/classes/total:bytes",
	"/memory/classes/heap/released:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/free:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/stacks:bytes",
	"/memory/classes/os-stacks:bytes",
	"/sched/goroutines:goroutines",
	"/gc/heap/goal:bytes",
	"/memory/classes/metadata/other:bytes",
	"/memory/classes/metadata/mspan/inuse:bytes",
	"/memory/classes/other:bytes",
	"/memory/classes/profiling/buckets:bytes",
}

// peakGoroutines is the most goroutines seen since the last log line: a burst of
// them between two lines leaves its goroutine descriptors (never freed) and stacks.
var peakGoroutines atomic.Int64

// watchGoroutines samples the goroutine count every 20 ms into peakGoroutines.
func watchGoroutines(ctx context.Context) {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n := runtime.NumGoroutine()
		for {
			old := peakGoroutines.Load()
			if int64(n) <= old || peakGoroutines.CompareAndSwap(old, int64(n)) {
				break
			}
		}
	}
}

func logMemory(log *slog.Logger, since time.Duration) {
	samples := make([]metrics.Sample, len(goMetrics))
	for i, n := range goMetrics {
		samples[i].Name = n
	}
	metrics.Read(samples)
	v := func(i int) int64 {
		if samples[i].Value.Kind() == metrics.KindUint64 {
			return int64(samples[i].Value.Uint64())
		}
		return -1
	}
	kb := func(b int64) int64 { return b / 1024 }
	ms := libc.MemStat()
	h := readCHeap()
	status := procStatus()
	log.Info("memdiag",
		"t_s", int(since.Seconds()),
		"rss_kb", status["VmRSS"], "anon_kb", status["RssAnon"], "file_kb", status["RssFile"],
		// Go: mapped and not returned to the OS, then its parts.
		"go_resident_kb", kb(v(0)-v(1)), "go_heap_objects_kb", kb(v(2)), "go_heap_free_kb", kb(v(3)),
		"go_heap_unused_kb", kb(v(4)), "go_stacks_kb", kb(v(5)+v(6)), "go_heap_goal_kb", kb(v(8)),
		"goroutines", v(7), "goroutines_max", peakGoroutines.Swap(0), "go_metadata_kb", kb(v(9)+v(10)), "go_other_kb", kb(v(11)+v(12)),
		"libc_mapped_kb", kb(int64(ms.Bytes)), "libc_mmaps", ms.Mmaps, "libc_allocs", ms.Allocs,
		// SQLite's C heap by what holds it (KiB; res: resident).
		"c_shared_pages", h.SharedPages, "c_shared_kb", h.SharedKB, "c_shared_res_kb", h.SharedResKB, "c_slots_kb", h.SharedSlotKB,
		"c_large", h.LargeRegions, "c_large_kb", h.LargeKB, "c_large_res_kb", h.LargeResKB,
		"c_empty", h.EmptyRegions, "c_empty_kb", h.EmptyKB, "c_empty_res_kb", h.EmptyResKB,
		"c_large_by_kb", top(h.LargeBySize, 8), "c_empty_by_kb", top(h.EmptyBySize, 8), "c_slots_by_size", top(h.SlotsBySize, 16))
}

// logConns logs what SQLite says each connection of the write and read pools holds.
func logConns(ctx context.Context, log *slog.Logger, a *app.App, since time.Duration) {
	for _, p := range []struct {
		name string
		db   *sql.DB
	}{{"write", a.DB.WriteDB()}, {"read", a.DB.ReadDB()}} {
		var cache, stmt, schema []int
		var pages [][]string
		var hits, misses int
		for _, c := range poolMemory(ctx, p.db, p.db.Stats().MaxOpenConnections) {
			cache, stmt, schema = append(cache, c.CacheKB), append(stmt, c.StmtKB), append(schema, c.SchemaKB)
			pages = append(pages, c.Pages)
			hits, misses = hits+c.Hits, misses+c.Misses
		}
		log.Info("memdiag_conns", "t_s", int(since.Seconds()), "pool", p.name,
			"cache_kb", cache, "pages", pages, "stmt_kb", stmt, "schema_kb", schema, "hits", hits, "misses", misses)
	}
}

func procStatus() map[string]int64 {
	out := map[string]int64{}
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return out
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		k, val, ok := strings.Cut(line, ":")
		if f := strings.Fields(val); ok && len(f) > 0 {
			if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
				out[k] = n
			}
		}
	}
	return out
}
