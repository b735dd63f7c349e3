package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/metrics"
)

// MetricsReader answers a server's load series (*metrics.Reader is one).
type MetricsReader interface {
	Series(ctx context.Context, serverID int64, r metrics.Range, now time.Time) (metrics.Series, error)
}

// serverMetrics answers GET /servers/{id}/metrics: 404 for a server the principal
// cannot see, then 422 on `range`.
func (s *Server) serverMetrics(r *request) (int, any, error) {
	ref, err := s.serverRef(r)
	if err != nil {
		return 0, nil, err
	}
	srv, err := s.svc.Servers.Server(r.ctx, r.p, ref)
	if err != nil {
		return 0, nil, err
	}
	var v hosting.Validation
	name, given := queryValue(r.Request, "range", &v)
	if given && name == "" {
		name = "-" // present but empty is not the default
	}
	if err := v.Err(); err != nil {
		return 0, nil, err
	}
	rng, ok := metrics.ParseRange(name)
	if !ok {
		return 0, nil, hosting.Invalid("range", "validation.metrics_range")
	}
	if s.metrics == nil {
		return 0, nil, hosting.Errorf(hosting.CodeUnavailable, "error.unavailable")
	}
	series, err := s.metrics.Series(r.ctx, srv.ID, rng, s.svc.Gate.NowFor(r.p.Account.ID))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, one(toMetrics(series)), nil
}

func toMetrics(s metrics.Series) api.Metrics {
	return api.Metrics{Range: s.Range, StepSeconds: s.StepSeconds, CPU: toPoints(s.CPU),
		Network: api.NetworkSeries{In: toPoints(s.NetIn), Out: toPoints(s.NetOut)},
		Disk:    api.DiskSeries{Read: toPoints(s.DiskRead), Write: toPoints(s.DiskWrite)}}
}

func toPoints(ps []metrics.Point) []api.MetricPoint {
	out := make([]api.MetricPoint, len(ps))
	for i, p := range ps {
		out[i] = api.MetricPoint{At: p.At, Value: p.Value}
	}
	return out
}
