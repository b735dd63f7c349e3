package httpapi

import (
	"net/http"
	"time"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
)

// The sandbox's test clock (docs/api.md, The sandbox): each account's own now, which only
// moves forward, and by which the real metering code charges the account.

// getClock answers GET /sandbox/v1/clock.
func (s *Server) getClock(r *request) (int, any, error) {
	return http.StatusOK, one(api.Clock{Now: s.svc.Gate.NowFor(r.p.Account.ID)}), nil
}

// advanceClock answers POST /sandbox/v1/clock {"advance": "72h"}: the account's clock
// moves forward and what the time did to the account is done before the answer.
func (s *Server) advanceClock(r *request) (int, any, error) {
	var b api.ClockAdvance
	if err := decode(r.Request, &b); err != nil {
		return 0, nil, err
	}
	if b.Advance == nil {
		return 0, nil, hosting.Invalid(ops.ClockAdvanceField, "validation.required")
	}
	d, err := time.ParseDuration(*b.Advance)
	if err != nil || len(*b.Advance) > 32 {
		return 0, nil, hosting.Invalid(ops.ClockAdvanceField, "validation.clock_advance", "max", "8760h")
	}
	now, err := s.svc.Sandbox.AdvanceClock(r.ctx, r.p, d)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, one(api.Clock{Now: now}), nil
}
