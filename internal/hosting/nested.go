package hosting

import (
	"errors"
	"fmt"
	"slices"
	"strings"
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
		if f != "body" || item == "" {
			key = f
			if r, ok := rename[f]; ok {
				key = r
			}
			if item != "" {
				key = item + "." + key
			}
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

// AddAll records the field errors of err, a validation *Error, under their own
// fields, as AddItem does with no item: a rule checked apart (dnszone's) adds its
// errors to a request's others. It reports whether err was such an error.
func (v *Validation) AddAll(err error) bool { return v.AddItem("", err, nil) }

// Item is the place of item i of list in a request: "servers[0]".
func Item(list string, i int) string { return fmt.Sprintf("%s[%d]", list, i) }

// Text is the error as one line for a person, each message rendered by msg: a
// validation error's messages each after its field ("field: message"), in Order and
// then any other field by name, joined by "; "; any other error's message.
func (e *Error) Text(msg func(Msg) string) string {
	if len(e.Fields) == 0 {
		return msg(e.Message)
	}
	var fields []string
	for _, f := range e.Order {
		if _, ok := e.Fields[f]; ok && !slices.Contains(fields, f) {
			fields = append(fields, f)
		}
	}
	var rest []string
	for f := range e.Fields {
		if !slices.Contains(fields, f) {
			rest = append(rest, f)
		}
	}
	slices.Sort(rest)
	var parts []string
	for _, f := range append(fields, rest...) {
		for _, m := range e.Fields[f] {
			parts = append(parts, f+": "+msg(m))
		}
	}
	return strings.Join(parts, "; ")
}
