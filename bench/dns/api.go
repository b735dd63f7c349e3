package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"
)

type client struct {
	base, token string
	http        *http.Client
}

func newClient(addr, token string) *client {
	return &client{base: "http://" + addr + "/v1", token: token, http: &http.Client{Timeout: time.Minute,
		Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
}

func (c *client) do(method, path string, body any) (int, map[string]any, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, c.base+path, rd)
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m, nil
}

func (c *client) waitUp(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(c.base + "/openapi.json"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("berthd did not come up")
}

// waitOp holds on the operation (an answer's "operation" object) until it ends.
func (c *client) waitOp(op any) error {
	id := int64(op.(map[string]any)["id"].(float64))
	for range 100 {
		code, m, err := c.do("GET", fmt.Sprintf("/operations/%d?wait=30", id), nil)
		if err != nil || code != 200 {
			return fmt.Errorf("operation %d: %d %v %v", id, code, m, err)
		}
		switch s := m["data"].(map[string]any)["status"]; s {
		case "running":
			continue
		case "success":
			return nil
		default:
			return fmt.Errorf("operation %d: %v", id, s)
		}
	}
	return fmt.Errorf("operation %d did not end", id)
}

// latencies are an API run's: every request's time, from when it was due.
type latencies struct {
	all      []time.Duration
	byPath   map[string][]time.Duration
	non200   int
	errs     int
	firstErr error
}

// paced sends GETs of paths, in turn, at rate a second for d, each at its due time
// whatever the ones before it are doing (an open loop: a slow answer does not hold
// the next request back, so it cannot hide a stall), and times each from its due
// time to the end of its body.
func (c *client) paced(paths []string, rate int, d time.Duration) latencies {
	n := int(d.Seconds() * float64(rate))
	every := time.Second / time.Duration(rate)
	var mu sync.Mutex
	l := latencies{byPath: map[string][]time.Duration{}}
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		due := start.Add(time.Duration(i) * every)
		time.Sleep(time.Until(due))
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("GET", c.base+paths[i%len(paths)], nil)
			req.Header.Set("Authorization", "Bearer "+c.token)
			resp, err := c.http.Do(req)
			if err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			took := time.Since(due)
			mu.Lock()
			defer mu.Unlock()
			l.all = append(l.all, took)
			l.byPath[paths[i%len(paths)]] = append(l.byPath[paths[i%len(paths)]], took)
			switch {
			case err != nil:
				l.errs++
				if l.firstErr == nil {
					l.firstErr = err
				}
			case resp.StatusCode != 200:
				l.non200++
			}
		}()
	}
	wg.Wait()
	slices.Sort(l.all)
	for _, v := range l.byPath {
		slices.Sort(v)
	}
	return l
}

func (l latencies) pct(p float64) time.Duration { return pct(l.all, p) }

// pct is the quantile p of the sorted v.
func pct(v []time.Duration, p float64) time.Duration {
	if len(v) == 0 {
		return 0
	}
	return v[min(len(v)-1, int(float64(len(v))*p))]
}

func (l latencies) String() string {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d.Microseconds())/1000) }
	s := fmt.Sprintf("%d requests: p50 %s ms, p90 %s ms, p99 %s ms, max %s ms; not 200: %d, errors: %d",
		len(l.all), ms(l.pct(0.5)), ms(l.pct(0.9)), ms(l.pct(0.99)), ms(l.pct(1)), l.non200, l.errs)
	if l.firstErr != nil {
		s += " (" + l.firstErr.Error() + ")"
	}
	for _, p := range slices.Sorted(maps.Keys(l.byPath)) {
		v := l.byPath[p]
		s += fmt.Sprintf("\n  GET %s: p50 %s ms, p99 %s ms, max %s ms", p, ms(pct(v, 0.5)), ms(pct(v, 0.99)), ms(pct(v, 1)))
	}
	return s
}
