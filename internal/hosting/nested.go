package hosting

import (
	"errors"
	"fmt"
)

// AddItem records the field errors of err, a validation *Error about one item of a
// list in a request (the sandbox's seed: item "servers[0]"), under the item's place:
// field f becomes item+"."+f (or what rename maps f to), and "body", the item as a
// whole, becomes item. The error's code carries over (CodeInsufficientCredit stays
// what the answer says). It reports whether err was such an error; any other error
// is the caller's.
func (v *Validation) AddItem(item string, err error, rename map[string]string) bool {
	var e *Error
	if !errors.As(err, &e) || len(e.Fields) == 0 {
		return false
	}
	for _, f := range e.Order {
		key := item
		if f != "body" {
			name := f
			if r, ok := rename[f]; ok {
				name = r
			}
			key = item + "." + name
		}
		for _, m := range e.Fields[f] {
			if v.fields == nil {
				v.fields = map[string][]Msg{}
			}
			if _, ok := v.fields[key]; !ok {
				v.order = append(v.order, key)
			}
			v.fields[key] = append(v.fields[key], m)
		}
	}
	if e.Code != CodeValidationFailed {
		v.SetCode(e.Code)
	}
	return true
}

// Item is the place of item i of list in a request: "servers[0]".
func Item(list string, i int) string { return fmt.Sprintf("%s[%d]", list, i) }
