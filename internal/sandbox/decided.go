package sandbox

import "github.com/berthhq/berth/internal/hosting"

// maxDecided bounds the operation faults remembered for the attempts after an
// operation's first: an operation retried after more newer ones met faults meets
// none on its later attempts.
const maxDecided = 10000

// decisions remembers the operation faults operations took, by operation id; the
// caller holds State.mu.
type decisions struct {
	byOp  map[int64]Fault
	order []int64 // oldest first
}

func newDecisions() decisions { return decisions{byOp: map[int64]Fault{}} }

func (d *decisions) put(opID int64, f Fault) {
	if _, ok := d.byOp[opID]; !ok {
		d.order = append(d.order, opID)
	}
	d.byOp[opID] = f
	for len(d.order) > maxDecided {
		delete(d.byOp, d.order[0])
		d.order = d.order[1:]
	}
}

// OperationFault implements ops.OperationFaults: the fault operation opID of the
// account, of type typ, meets. On its first attempt (first) the account's oldest
// operation fault of that type that wins its draw is taken, counted once for the
// operation, and remembered; later attempts meet the same one (or none). fail says
// the operation fails at once; slow, when above 0, multiplies its durations.
func (s *State) OperationFault(accountID, opID int64, typ hosting.OpType, first bool) (fail bool, slow float64) {
	if s == nil {
		return false, 0
	}
	if !first {
		s.mu.Lock()
		f, ok := s.decided.byOp[opID]
		s.mu.Unlock()
		if !ok {
			return false, 0
		}
		return f.Fail, f.Slow
	}
	f, ok := s.take(accountID, func(f *Fault) bool { return f.Operation == typ })
	if !ok {
		return false, 0
	}
	s.mu.Lock()
	s.decided.put(opID, f)
	s.mu.Unlock()
	return f.Fail, f.Slow
}
