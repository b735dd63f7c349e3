package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/internal/hosting"
)

// listEvents is GET /events (docs/api.md, Events): the account's events after a
// cursor, oldest first, optionally held until one comes.
func (s *Server) listEvents(r *request) (int, any, error) {
	f, wait, err := eventQuery(r.Request)
	if err != nil {
		return 0, nil, err
	}
	limit := f.Limit
	f.Limit++ // one more tells whether there are more
	events, err := s.svc.Events.Events(r.ctx, r.p, f, wait)
	if err != nil {
		return 0, nil, err
	}
	out := api.EventList{Data: []api.Event{}, Meta: api.EventListMeta{NextAfter: f.After, HasMore: len(events) > limit}}
	for _, e := range events[:min(len(events), limit)] {
		out.Data = append(out.Data, toEvent(e))
		out.Meta.NextAfter = e.ID
	}
	return http.StatusOK, out, nil
}

// eventQuery reads GET /events's parameters, every one that is wrong at once.
func eventQuery(r *http.Request) (hosting.EventFilter, time.Duration, error) {
	f := hosting.EventFilter{Limit: hosting.DefaultEventLimit}
	var wait time.Duration
	var v hosting.Validation
	if raw, ok := queryValue(r, "after", &v); ok {
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || n < 0 {
			v.Add("after", "validation.event_after")
		}
		f.After = n
	}
	if raw, ok := queryValue(r, "types", &v); ok {
		var msg string
		if f.Types, msg = hosting.ParseEventPatterns(raw); msg != "" {
			v.Add("types", msg)
		}
	}
	if raw, ok := queryValue(r, "resource", &v); ok {
		if res, ok := hosting.ParseEventResource(raw); ok {
			f.Resource = &res
		} else {
			v.Add("resource", "validation.event_resource")
		}
	}
	if raw, ok := queryValue(r, "limit", &v); ok {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > hosting.MaxEventLimit {
			v.Add("limit", "validation.event_limit")
		}
		f.Limit = n
	}
	if raw, ok := queryValue(r, "wait", &v); ok {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > int(hosting.MaxEventWait/time.Second) { // n first: n seconds may overflow
			v.Add("wait", "validation.wait_range")
		}
		wait = time.Duration(n) * time.Second
	}
	return f, wait, v.Err("after", "types", "resource", "limit", "wait")
}

func toEvent(e hosting.Event) api.Event {
	out := api.Event{ID: e.ID, Type: string(e.Type), Resource: api.EventResource{Type: e.Resource.Type, ID: e.Resource.ID},
		Data: e.Data, CreatedAt: e.CreatedAt}
	if e.RequestID != "" {
		id := e.RequestID
		out.RequestID = &id
	}
	return out
}
