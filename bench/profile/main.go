// Command profile runs Berth in-process as `berthd serve` does (app.Open,
// StartWorkers, the /v1 handler behind the same http.Server settings) and serves
// net/http/pprof on a second, separate address, so that a benchmark's load can be
// profiled without touching berthd. Used by bench/profile-get-server.sh.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/berthhq/berth/internal/app"
	"github.com/berthhq/berth/internal/asynclog"
	"github.com/berthhq/berth/internal/ops"
)

func main() {
	data := flag.String("data", "", "data directory (seeded)")
	database := flag.String("database", "", "PostgreSQL URL (seeded), instead of -data")
	addr := flag.String("addr", "127.0.0.1:18080", "API address")
	pprofAddr := flag.String("pprof", "127.0.0.1:18082", "pprof address")
	rateLimit := flag.Int("rate-limit", 100000000, "requests per minute per token")
	readCache := flag.Int("read-cache-servers", app.DefaultReadCacheServers, "as serve --read-cache-servers")
	scale := flag.Float64("sim-time-scale", 1, "sim driver time scale (1, as bench/scale.sh runs berthd: at 0.001 the sampler reads all servers every 60 ms)")
	mutexRate := flag.Int("mutex-fraction", 0, "runtime.SetMutexProfileFraction (0: off)")
	blockRate := flag.Int("block-rate", 0, "runtime.SetBlockProfileRate in ns (0: off)")
	dnsAddr := flag.String("dns-addr", "", "address to answer DNS on, as serve --dns-addr (bench/dns.sh)")
	dnsNameservers := flag.String("dns-nameservers", "", "as serve --dns-nameservers, comma-separated")
	flag.Parse()
	if (*data == "") == (*database == "") {
		log.Fatal("profile: one of -data and -database is required")
	}
	app.UseSpareProcs() // as berthd serve
	runtime.SetMutexProfileFraction(*mutexRate)
	runtime.SetBlockProfileRate(*blockRate)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// berthd's logger: JSON lines through asynclog (cmd/berthd serve).
	logw := asynclog.New(os.Stderr, 0)
	defer logw.Close()
	logger := asynclog.JSONLogger(logw)
	var nameservers []string
	if *dnsNameservers != "" {
		nameservers = strings.Split(*dnsNameservers, ",")
	}
	a, err := app.Open(ctx, app.Config{DataDir: *data, DatabaseURL: *database, Driver: "sim", SimTimeScale: *scale, RateLimit: *rateLimit, Logger: logger, ReadCacheServers: *readCache,
		DNS: ops.DNSOptions{Nameservers: nameservers}, DNSServer: app.DNSServer{Addr: *dnsAddr}})
	if err != nil {
		log.Fatalf("profile: %v", err)
	}
	defer a.Close(context.Background())
	stopDNS, err := a.ServeDNS() // as berthd serve: nothing without -dns-addr
	if err != nil {
		log.Fatalf("profile: %v", err)
	}
	defer func() { _ = stopDNS() }()
	if err := a.StartWorkers(ctx); err != nil {
		log.Fatalf("profile: %v", err)
	}
	h, err := a.Handler()
	if err != nil {
		log.Fatalf("profile: %v", err)
	}

	pm := http.NewServeMux()
	pm.HandleFunc("/debug/pprof/", pprof.Index)
	pm.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	pm.HandleFunc("/debug/pprof/profile", pprof.Profile)
	pm.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	pm.HandleFunc("/debug/pprof/trace", pprof.Trace)
	go func() {
		if err := http.ListenAndServe(*pprofAddr, pm); err != nil {
			log.Printf("profile: pprof: %v", err)
		}
	}()

	// The same settings as cmd/berthd/serve.go.
	srv := &http.Server{
		Addr:              *addr,
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      90 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	go func() {
		<-ctx.Done()
		sh, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(sh)
	}()
	fmt.Fprintf(os.Stderr, "profile: API on http://%s/v1, pprof on http://%s/debug/pprof/\n", *addr, *pprofAddr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatalf("profile: %v", err)
	}
}
