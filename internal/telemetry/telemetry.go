// Package telemetry is Berth's operators' signals in Prometheus's terms: the
// collectors of every berth_* series (docs/operating.md lists them), on a registry of
// Berth's own with the Go runtime's and the process's, served by Handler on a
// listener of its own (berthd serve --metrics-addr), never on the public port.
//
// The core and the HTTP layers do not import Prometheus: each declares the little it
// reports (ops.Telemetry, httpapi.Telemetry, console.Telemetry) and *Metrics
// satisfies them all. A nil *Metrics is valid: every method does nothing, so "no
// --metrics-addr" costs nothing and tests that do not care set nothing.
package telemetry

import (
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/berthhq/berth/internal/hosting"
)

// Metrics holds Berth's collectors.
type Metrics struct {
	reg *prometheus.Registry
	log *slog.Logger

	httpRequests   *prometheus.CounterVec
	httpDuration   *prometheus.HistogramVec
	operations     *prometheus.CounterVec
	opDuration     *prometheus.HistogramVec
	meterDuration  *prometheus.HistogramVec
	rateLimited    *prometheus.CounterVec
	signInFailures prometheus.Counter
	dnsPublishes   *prometheus.CounterVec
}

// Surfaces of the HTTP port, the values of the label "handler".
const (
	SurfaceAPI     = "api"
	SurfaceConsole = "console"
)

// Who a 429 limited, the values of the label "by".
const (
	ByToken   = "token"
	ByAddress = "address"
	ByEmail   = "email"
)

// New returns Berth's collectors on a registry of their own, with the Go runtime's
// and the process's collectors. log receives scrape errors (nil: slog.Default).
func New(log *slog.Logger) *Metrics {
	if log == nil {
		log = slog.Default()
	}
	m := &Metrics{reg: prometheus.NewRegistry(), log: log}
	m.httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "berth_http_requests_total",
		Help: "HTTP requests answered on the API port, by surface (api, console), route pattern, method and status code.",
	}, []string{"handler", "route", "method", "code"})
	m.httpDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "berth_http_request_duration_seconds",
		Help:    "Time to answer an HTTP request on the API port (a ?wait is held up to 60 s), by surface, route pattern and method.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
	}, []string{"handler", "route", "method"})
	m.operations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "berth_operations_total",
		Help: "Operations ended, by type (provision, power, reinstall, rescale, snapshot, restore, delete) and result (success, error).",
	}, []string{"type", "result"})
	m.opDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "berth_operation_duration_seconds",
		Help:    "Time from an operation's acceptance to its end, queueing and retries included, by type and result.",
		Buckets: []float64{.1, .5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600},
	}, []string{"type", "result"})
	m.meterDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "berth_metering_pass_duration_seconds",
		Help:    "Time a metering pass (charging every hour due) took, by result (success, error).",
		Buckets: []float64{.001, .005, .01, .05, .1, .5, 1, 5, 10, 30, 60},
	}, []string{"result"})
	m.rateLimited = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "berth_rate_limited_total",
		Help: "429 answers, by surface and by what was limited: a token, a client address, or (console sign-in) an email.",
	}, []string{"handler", "by"})
	m.signInFailures = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "berth_console_signin_failures_total",
		Help: "Console sign-ins refused for a wrong email or password.",
	})
	m.dnsPublishes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "berth_dns_publishes_total",
		Help: "Publishes of a zone to PowerDNS (serve --powerdns-url), by result (success, error: retried).",
	}, []string{"result"})
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.httpRequests, m.httpDuration, m.operations, m.opDuration, m.meterDuration, m.rateLimited, m.signInFailures, m.dnsPublishes)
	// Series that exist from the start, so that a rate over them is 0, not absent.
	for _, by := range []string{ByToken, ByAddress} {
		m.rateLimited.WithLabelValues(SurfaceAPI, by)
	}
	for _, by := range []string{ByAddress, ByEmail} {
		m.rateLimited.WithLabelValues(SurfaceConsole, by)
	}
	return m
}

// Registry is where the collectors are registered (to add one, or to gather in tests).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in Prometheus's exposition formats. A collector that
// fails (the database does not answer) leaves its series out of the answer, which
// still carries the others; the failure is logged.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorLog:          slogPrinter{m.log},
		ErrorHandling:     promhttp.ContinueOnError,
		Registry:          m.reg,
		Timeout:           20 * time.Second,
		EnableOpenMetrics: true,
	})
}

type slogPrinter struct{ log *slog.Logger }

func (p slogPrinter) Println(v ...any) {
	p.log.Warn("metrics", "err", fmt.Sprint(v...))
}

// OperationFinished counts an operation's end (ops.Telemetry).
func (m *Metrics) OperationFinished(typ hosting.OpType, result hosting.OpStatus, took time.Duration) {
	if m == nil {
		return
	}
	m.operations.WithLabelValues(string(typ), string(result)).Inc()
	m.opDuration.WithLabelValues(string(typ), string(result)).Observe(max(took, 0).Seconds())
}

// MeterPassed records a metering pass (ops.Telemetry).
func (m *Metrics) MeterPassed(took time.Duration, err error) {
	if m == nil {
		return
	}
	result := "success"
	if err != nil {
		result = "error"
	}
	m.meterDuration.WithLabelValues(result).Observe(max(took, 0).Seconds())
}

// DNSPublished counts a publish of a zone to PowerDNS that failed with err (nil: it
// did not) (ops.Telemetry).
func (m *Metrics) DNSPublished(err error) {
	if m == nil {
		return
	}
	result := "success"
	if err != nil {
		result = "error"
	}
	m.dnsPublishes.WithLabelValues(result).Inc()
}

// RateLimited counts a 429 answer (httpapi.Telemetry, console.Telemetry): surface is
// SurfaceAPI or SurfaceConsole, by one of ByToken, ByAddress, ByEmail.
func (m *Metrics) RateLimited(surface, by string) {
	if m == nil {
		return
	}
	m.rateLimited.WithLabelValues(surface, by).Inc()
}

// SignInFailed counts a console sign-in refused for its credentials (console.Telemetry).
func (m *Metrics) SignInFailed() {
	if m == nil {
		return
	}
	m.signInFailures.Inc()
}

// Instrument counts and times the requests h answers, under surface (SurfaceAPI,
// SurfaceConsole). The route is the ServeMux pattern that matched ("GET
// /v1/servers/{id}"), never the path: one series per route, however many servers.
// A request no route matched is counted as route "unmatched"; a method outside the
// standard ones as "other". Nil m returns h itself.
func (m *Metrics) Instrument(surface string, h http.Handler) http.Handler {
	if m == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		// Deferred so that a request cut short (a list whose stream broke panics with
		// http.ErrAbortHandler) is counted too.
		defer func() {
			route, method := routeOf(r), methodOf(r.Method)
			code := sw.status
			if code == 0 {
				code = http.StatusOK
			}
			m.httpRequests.WithLabelValues(surface, route, method, strconv.Itoa(code)).Inc()
			m.httpDuration.WithLabelValues(surface, route, method).Observe(time.Since(start).Seconds())
		}()
		h.ServeHTTP(sw, r)
	})
}

// routeOf is the pattern of the route that served r: ServeMux records it in the
// request it is handed, which the handlers below pass on as it is. The catch-all
// pattern "/" of both surfaces answers only unknown paths.
func routeOf(r *http.Request) string {
	if r.Pattern == "" || r.Pattern == "/" {
		return "unmatched"
	}
	return r.Pattern
}

func methodOf(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return m
	}
	return "other"
}

// statusWriter remembers the status answered.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection's writer (flushes,
// deadlines).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
