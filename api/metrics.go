package api

import (
	"encoding/json"
	"fmt"
)

// Metrics is a server's load over a range (GET /servers/{id}/metrics): each series
// oldest first, one point per bucket of StepSeconds that holds samples.
type Metrics struct {
	Range       string        `json:"range"`
	StepSeconds int64         `json:"step_seconds"`
	CPU         []MetricPoint `json:"cpu"`
	Network     NetworkSeries `json:"network"`
	Disk        DiskSeries    `json:"disk"`
}

// NetworkSeries are bytes per second received (in) and sent (out) by the server.
type NetworkSeries struct {
	In  []MetricPoint `json:"in"`
	Out []MetricPoint `json:"out"`
}

// DiskSeries are bytes per second read and written by the server's disk.
type DiskSeries struct {
	Read  []MetricPoint `json:"read"`
	Write []MetricPoint `json:"write"`
}

// MetricPoint is one bucket: its start (Unix seconds) and the average over it. On the
// wire it is a pair, [unix_ts, value].
type MetricPoint struct {
	At    int64
	Value float64
}

// MarshalJSON writes the point as [at, value].
func (p MetricPoint) MarshalJSON() ([]byte, error) {
	return json.Marshal([2]any{p.At, p.Value})
}

// UnmarshalJSON reads a point written as [at, value].
func (p *MetricPoint) UnmarshalJSON(b []byte) error {
	var pair []json.Number
	if err := json.Unmarshal(b, &pair); err != nil {
		return err
	}
	if len(pair) != 2 {
		return fmt.Errorf("metric point: %d elements, want 2", len(pair))
	}
	at, err := pair[0].Int64()
	if err != nil {
		return fmt.Errorf("metric point time: %w", err)
	}
	v, err := pair[1].Float64()
	if err != nil {
		return fmt.Errorf("metric point value: %w", err)
	}
	p.At, p.Value = at, v
	return nil
}
