package sandbox

import (
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/berthhq/berth/internal/hosting"
)

// Limits of a fault (docs/api.md, The sandbox; api/openapi.yaml states them too).
const (
	// MaxFaults is how many faults that still apply an account may hold.
	MaxFaults = 100
	// MaxDelayMS bounds delay_ms.
	MaxDelayMS = 30000
	// MaxSlow bounds slow: at the realistic scale, the longest step (a reinstall,
	// 40 s) then still ends within an attempt's bound (worker.Worker.AttemptTimeout,
	// 7 min by default), so a slow operation is slow, never cut off and retried.
	MaxSlow = 10
	// MaxTimes bounds times.
	MaxTimes = 1_000_000
	// Any is the method or path that matches every one.
	Any = "*"
)

// FaultStatuses are the statuses an HTTP fault may answer.
var FaultStatuses = []int{409, 429, 500, 503}

// FaultMethods are the methods an HTTP fault may name, beside Any.
var FaultMethods = []string{"GET", "POST", "PATCH", "DELETE"}

// FaultOperations are the operation types an operation fault may name.
var FaultOperations = []hosting.OpType{hosting.OpProvision, hosting.OpPower, hosting.OpReinstall, hosting.OpRescale,
	hosting.OpSnapshot, hosting.OpRestore, hosting.OpDelete,
	hosting.OpCreateVolume, hosting.OpAttachVolume, hosting.OpDetachVolume, hosting.OpResizeVolume}

// Fault is a fault an account asked for. It is either an HTTP fault (Method, Path,
// and Status and/or a delay) or an operation fault (Operation, and Fail or Slow).
type Fault struct {
	ID int64
	// HTTP fault.
	Method, Path string // a method or Any; a route's path template or Any
	Status       int    // 0: none (a delay alone)
	DelayMS      int64
	HasDelay     bool // DelayMS was given (0 included)
	// Operation fault.
	Operation hosting.OpType
	Fail      bool
	Slow      float64 // 0: not slow
	// Times is how many matches it applies to (0: until deleted); Remaining counts
	// down from it.
	Times, Remaining int64
	Probability      float64
}

// IsHTTP reports whether f is an HTTP fault (else an operation fault).
func (f Fault) IsHTTP() bool { return f.Operation == "" }

// exhausted reports whether f applies to no more matches.
func (f *Fault) exhausted() bool { return f.Times > 0 && f.Remaining == 0 }

// FaultSpec is what a client asks for: nil is a field it left out.
type FaultSpec struct {
	Method, Path *string
	Status       *int64
	DelayMS      *int64
	Operation    *string
	Fail         *bool
	Slow         *float64
	Times        *int64
	Probability  *float64
}

// FaultFields are the fields of a fault in the order of its schema: the order of
// its 422's messages.
var FaultFields = []string{"method", "path", "status", "delay_ms", "operation", "fail", "slow", "times", "probability"}

// Route is a route of the /v1 API an HTTP fault may name: its method, its path
// template as the OpenAPI document writes it (relative to /v1), and the fault
// statuses it can answer in production (a fault never makes a route answer what it
// never would).
type Route struct {
	Method, Path string
	Statuses     []int
}

// matches reports whether f names rt.
func (f *Fault) matches(rt Route) bool {
	return (f.Method == Any || f.Method == rt.Method) && (f.Path == Any || f.Path == rt.Path) &&
		(f.Status == 0 || slices.Contains(rt.Statuses, f.Status))
}

// AddFault validates spec against the routes an HTTP fault may name and adds it to
// the account's faults. A spec that is not one fault of one kind, or out of its
// limits, is a validation error naming each field; an account holding MaxFaults
// faults that still apply is one on "fault_quota".
func (s *State) AddFault(accountID int64, spec FaultSpec, routes []Route) (Fault, error) {
	f, err := newFault(spec, routes)
	if err != nil {
		return Fault{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.of(accountID)
	live := 0
	for _, g := range a.faults {
		if !g.exhausted() {
			live++
		}
	}
	if live >= MaxFaults {
		var v hosting.Validation
		v.Add("fault_quota", "validation.sandbox_fault_quota", "quota", MaxFaults)
		return Fault{}, v.Err()
	}
	// Exhausted faults stay listed for a client to see they were used, but never
	// more than MaxFaults in all: the oldest exhausted ones make room.
	for len(a.faults) >= MaxFaults {
		i := slices.IndexFunc(a.faults, (*Fault).exhausted)
		a.faults = slices.Delete(a.faults, i, i+1)
	}
	f.ID = s.faultSeq.Add(1)
	a.faults = append(a.faults, &f)
	return f, nil
}

// newFault checks spec (every error at once: each field's own limits, then that the
// fields make one fault of one kind) and returns its fault.
func newFault(spec FaultSpec, routes []Route) (Fault, error) {
	var v hosting.Validation
	f := Fault{Method: Any, Path: Any, Times: 1, Remaining: 1, Probability: 1}
	checkFields(&v, &f, spec, routes)
	isHTTP := spec.Method != nil || spec.Path != nil || spec.Status != nil || spec.DelayMS != nil
	isOp := spec.Operation != nil || spec.Fail != nil || spec.Slow != nil
	switch {
	case !isHTTP && !isOp:
		v.Add("body", "validation.sandbox_fault_kind")
	case isHTTP && isOp:
		for _, field := range []struct {
			name string
			set  bool
		}{{"operation", spec.Operation != nil}, {"fail", spec.Fail != nil}, {"slow", spec.Slow != nil}} {
			if field.set && !v.Has(field.name) {
				v.Add(field.name, "validation.sandbox_fault_both")
			}
		}
	case isHTTP:
		checkHTTP(&v, &f, spec, routes)
	default:
		checkOperation(&v, &f, spec)
	}
	if err := v.Err(FaultFields...); err != nil {
		return Fault{}, err
	}
	return f, nil
}

// checkFields checks each field given against its own limits, into f.
func checkFields(v *hosting.Validation, f *Fault, spec FaultSpec, routes []Route) {
	if spec.Method != nil {
		f.Method = *spec.Method
		if f.Method != Any && !slices.Contains(FaultMethods, f.Method) {
			v.Add("method", "validation.one_of", "values", strings.Join(append(slices.Clone(FaultMethods), Any), ", "))
		}
	}
	if spec.Path != nil {
		f.Path = *spec.Path
		if f.Path != Any && !slices.ContainsFunc(routes, func(rt Route) bool { return rt.Path == f.Path }) {
			v.Add("path", "validation.sandbox_fault_path")
		}
	}
	if spec.Status != nil {
		if st := *spec.Status; !slices.Contains(FaultStatuses, int(st)) {
			v.Add("status", "validation.one_of", "values", "409, 429, 500, 503")
		} else {
			f.Status = int(st)
		}
	}
	if spec.DelayMS != nil {
		if d := *spec.DelayMS; d < 0 || d > MaxDelayMS {
			v.Add("delay_ms", "validation.int_range", "min", 0, "max", MaxDelayMS)
		} else {
			f.DelayMS, f.HasDelay = d, true
		}
	}
	if spec.Operation != nil {
		if op := hosting.OpType(*spec.Operation); !slices.Contains(FaultOperations, op) {
			var names []string
			for _, o := range FaultOperations {
				names = append(names, string(o))
			}
			v.Add("operation", "validation.one_of", "values", strings.Join(names, ", "))
		} else {
			f.Operation = op
		}
	}
	if spec.Fail != nil {
		f.Fail = *spec.Fail
	}
	if spec.Slow != nil {
		if sl := *spec.Slow; !(sl > 0 && sl <= MaxSlow) {
			v.Add("slow", "validation.sandbox_slow_range", "max", MaxSlow)
		} else {
			f.Slow = sl
		}
	}
	if spec.Times != nil {
		if t := *spec.Times; t < 0 || t > MaxTimes {
			v.Add("times", "validation.int_range", "min", 0, "max", MaxTimes)
		} else {
			f.Times, f.Remaining = t, t
		}
	}
	if spec.Probability != nil {
		if p := *spec.Probability; !(p >= 0 && p <= 1) {
			v.Add("probability", "validation.number_range", "min", 0, "max", 1)
		} else {
			f.Probability = p
		}
	}
}

// checkHTTP checks that the fields of an HTTP fault make one: a status or a delay,
// and a method and a path that name a route together, which can answer the status.
func checkHTTP(v *hosting.Validation, f *Fault, spec FaultSpec, routes []Route) {
	if spec.Status == nil && spec.DelayMS == nil {
		v.Add("status", "validation.sandbox_fault_status_or_delay")
	}
	if v.Has("method") || v.Has("path") || v.Has("status") {
		return
	}
	var named []Route
	for _, rt := range routes {
		if (f.Method == Any || f.Method == rt.Method) && (f.Path == Any || f.Path == rt.Path) {
			named = append(named, rt)
		}
	}
	switch {
	case len(named) == 0:
		v.Add("method", "validation.sandbox_fault_route", "method", f.Method, "path", f.Path)
	case f.Status != 0 && !slices.ContainsFunc(named, f.matches):
		v.Add("status", "validation.sandbox_fault_status_route", "status", f.Status)
	}
}

// checkOperation checks that the fields of an operation fault make one: an
// operation, and fail: true or slow, not both.
func checkOperation(v *hosting.Validation, f *Fault, spec FaultSpec) {
	if spec.Operation == nil {
		v.Add("operation", "validation.required")
	}
	switch {
	case f.Fail && spec.Slow != nil:
		if !v.Has("slow") {
			v.Add("slow", "validation.sandbox_slow_with_fail")
		}
		f.Slow = 0
	case !f.Fail && spec.Slow == nil:
		v.Add("fail", "validation.sandbox_fail_or_slow")
	}
}

// Faults lists the account's faults, oldest first.
func (s *State) Faults(accountID int64) []Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.accounts[accountID]
	if !ok {
		return []Fault{}
	}
	out := make([]Fault, 0, len(a.faults))
	for _, f := range a.faults {
		out = append(out, *f)
	}
	return out
}

// DeleteFault removes one of the account's faults; false when it has none of id.
func (s *State) DeleteFault(accountID, id int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.accounts[accountID]
	if !ok {
		return false
	}
	n := len(a.faults)
	a.faults = slices.DeleteFunc(a.faults, func(f *Fault) bool { return f.ID == id })
	return len(a.faults) < n
}

// ClearFaults removes every fault of the account (DELETE /sandbox/v1/faults, and a
// reset of the account).
func (s *State) ClearFaults(accountID int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.accounts[accountID]; ok {
		a.faults = nil
	}
}

// TakeHTTPFault returns the fault that applies to a request of the account to rt,
// if any: the oldest of its HTTP faults that matches rt and wins its draw. Taking it
// counts the match against its times.
func (s *State) TakeHTTPFault(accountID int64, rt Route) (Fault, bool) {
	if s == nil {
		return Fault{}, false
	}
	return s.take(accountID, func(f *Fault) bool { return f.IsHTTP() && f.matches(rt) })
}

// take returns, and counts, the account's oldest fault that match selects, is not
// exhausted and wins its draw.
func (s *State) take(accountID int64, match func(*Fault) bool) (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.accounts[accountID]
	if !ok {
		return Fault{}, false
	}
	for _, f := range a.faults {
		if f.exhausted() || !match(f) || !(s.draw() < f.Probability) {
			continue
		}
		if f.Times > 0 {
			f.Remaining--
		}
		return *f, true
	}
	return Fault{}, false
}

func randFloat() float64 { return rand.Float64() }
