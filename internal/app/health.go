package app

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/berthhq/berth/internal/store"
)

// Probes of a supervisor or a load balancer, on the API port beside /v1 and the
// console: no token, no rate limit, not counted in the HTTP metrics.
const (
	// HealthzPath answers 200 {"status":"ok"} while the process serves HTTP at all.
	HealthzPath = "/healthz"
	// ReadyzPath answers 200 {"status":"ok"} when this process can serve requests (its
	// database answers and its schema is current), else 503
	// {"status":"unavailable","reason":"..."}.
	ReadyzPath = "/readyz"
)

// readyTimeout bounds a readiness check. SQLite has one writer connection, which a
// long transaction (a metering pass catching up) can hold for a second or two; a
// probe waits for it that long before it calls the process unready.
const readyTimeout = 3 * time.Second

// readiness is what /readyz asks (store.Store is one).
type readiness interface {
	Ready(ctx context.Context) error
}

// health serves /healthz and /readyz.
type health struct {
	st  readiness
	log *slog.Logger
	// unready remembers that the last check failed, so that a failure is logged when
	// it starts and when it ends, not at every probe.
	unready atomic.Bool
}

func (h *health) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		writeProbe(w, r, http.StatusMethodNotAllowed, map[string]string{"status": "method_not_allowed"})
		return
	}
	if r.URL.Path == HealthzPath {
		writeProbe(w, r, http.StatusOK, map[string]string{"status": "ok"})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	err := h.st.Ready(ctx)
	if err == nil {
		if h.unready.Swap(false) {
			h.log.Info("ready again")
		}
		writeProbe(w, r, http.StatusOK, map[string]string{"status": "ok"})
		return
	}
	// The reason is short and fixed: the probe is on the public port.
	reason := "database unreachable"
	if errors.Is(err, store.ErrNotMigrated) {
		reason = "database schema not migrated"
	}
	if !h.unready.Swap(true) {
		h.log.Warn("not ready", "reason", reason, "err", err)
	}
	hd.Set("Retry-After", "5")
	writeProbe(w, r, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "reason": reason})
}

func writeProbe(w http.ResponseWriter, r *http.Request, status int, body map[string]string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_ = json.NewEncoder(w).Encode(body)
	}
}
