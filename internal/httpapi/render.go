package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/internal/hosting"
)

// MaxBody is the largest request body accepted (API-DECISIONS §1).
const MaxBody = 64 << 10

// MaxRecipeBody caps a recipe's body: its script may be 64 KiB itself, and JSON
// escaping can make that several times longer on the wire.
const MaxRecipeBody = 512 << 10

// statusOf is the one map from error codes to HTTP statuses.
var statusOf = map[hosting.Code]int{
	hosting.CodeUnauthenticated:    http.StatusUnauthorized,
	hosting.CodeMissingScope:       http.StatusForbidden,
	hosting.CodeAccountBlocked:     http.StatusForbidden,
	hosting.CodeServerSuspended:    http.StatusForbidden,
	hosting.CodeNotFound:           http.StatusNotFound,
	hosting.CodeBusy:               http.StatusConflict,
	hosting.CodeValidationFailed:   http.StatusUnprocessableEntity,
	hosting.CodeInsufficientCredit: http.StatusUnprocessableEntity,
	hosting.CodeRateLimited:        http.StatusTooManyRequests,
	hosting.CodeUnavailable:        http.StatusServiceUnavailable,
	hosting.CodeInternal:           http.StatusInternalServerError,
	codeMethodNotAllowed:           http.StatusMethodNotAllowed,
}

const codeMethodNotAllowed hosting.Code = "method_not_allowed"

// StatusOf is the HTTP status of an error code: the one table for every edge that
// renders the core's errors (the API, the console). ok is false for a code it does
// not know, which an edge renders as 500.
func StatusOf(code hosting.Code) (status int, ok bool) {
	status, ok = statusOf[code]
	return status, ok
}

// errorBody renders err in lang. Errors that are not *hosting.Error are internal:
// the client sees only "internal error"; the detail goes to the log.
func (s *Server) errorBody(err error, lang string) (int, api.Error, *hosting.Error) {
	var he *hosting.Error
	if !errors.As(err, &he) {
		he = hosting.Errorf(hosting.CodeInternal, "error.internal")
	}
	status, ok := statusOf[he.Code]
	if !ok {
		status = http.StatusInternalServerError
	}
	body := api.Error{Code: string(he.Code)}
	if len(he.Fields) > 0 {
		body.Errors = make(map[string][]string, len(he.Fields))
		total := 0
		for field, msgs := range he.Fields {
			for _, m := range msgs {
				body.Errors[field] = append(body.Errors[field], s.i18n.T(lang, m.ID, m.Args))
				total++
			}
		}
		first := he.Order[0]
		body.Message = body.Errors[first][0]
		if total > 1 {
			body.Message += s.i18n.T(lang, "error.more_errors", map[string]any{"count": total - 1})
		}
	} else {
		body.Message = s.i18n.T(lang, he.Message.ID, he.Message.Args)
	}
	if he.Operation != nil {
		body.Operation = &api.OperationRef{ID: he.Operation.ID, Type: string(he.Operation.Type), StartedAt: he.Operation.StartedAt}
	}
	return status, body, he
}

// writeJSON writes a JSON body with its status.
func writeJSON(w http.ResponseWriter, status int, body any) {
	buf, err := json.Marshal(body)
	if err != nil {
		http.Error(w, `{"message":"internal error","code":"internal"}`, http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(buf)+1))
	w.WriteHeader(status)
	buf = append(buf, '\n')
	_, _ = w.Write(buf)
}

// decode reads a JSON object body into dst strictly: a field dst does not have is a
// validation error on that field; a value of the wrong type names its field; anything
// that is not one JSON object is an error on "body". An empty body counts as {}.
func decode(r *http.Request, dst any) error { return decodeMax(r, dst, MaxBody) }

// decodeMax is decode with a body cap of max bytes.
func decodeMax(r *http.Request, dst any, max int64) error {
	data, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, max))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return hosting.Invalid("body", "validation.body_too_large", "max", max)
		}
		return hosting.Invalid("body", "validation.invalid_json")
	}
	data = bytes.Trim(data, " \t\r\n") // JSON's whitespace (RFC 8259 §2), not Unicode's
	// encoding/json stores what is not UTF-8, and an unpaired surrogate escape, as
	// U+FFFD: a name would not be what the client sent.
	if !utf8.Valid(data) || hasLoneSurrogate(data) {
		return hosting.Invalid("body", "validation.invalid_utf8")
	}
	if len(data) == 0 {
		data = []byte("{}")
	}
	if data[0] != '{' {
		if json.Valid(data) {
			return hosting.Invalid("body", "validation.body_shape")
		}
		return hosting.Invalid("body", "validation.invalid_json")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err = dec.Decode(dst)
	if err == nil {
		if _, err := dec.Token(); err != io.EOF {
			return hosting.Invalid("body", "validation.invalid_json")
		}
		// encoding/json matches member names case-insensitively, Unicode folding
		// included ("ſ" for "s"): {"PLAN_ID": 1} has set plan_id. The schema's names
		// are exact, so such a member is an unknown field.
		return unknownFields(data, dst, "")
	}
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "body"
		}
		return hosting.Invalid(field, typeMessage(te.Type))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field, _ := strconv.Unquote(strings.TrimPrefix(err.Error(), "json: unknown field "))
		if field == "" {
			field = "body"
		}
		return unknownFields(data, dst, field)
	}
	return hosting.Invalid("body", "validation.invalid_json")
}

// hasLoneSurrogate reports whether a JSON text holds, in a string, a \uXXXX escape
// of a UTF-16 surrogate that is not a high one followed by a low one: it stands for
// no character. Text outside strings is left to the decoder.
func hasLoneSurrogate(data []byte) bool {
	in := false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			in = !in
		case c == '\\' && in:
			if i+1 < len(data) && data[i+1] == 'u' {
				r, ok := hex4(data, i+2)
				switch {
				case ok && utf16.IsSurrogate(r) && r < 0xDC00: // high: a low must follow
					if i+7 >= len(data) || data[i+6] != '\\' || data[i+7] != 'u' {
						return true
					}
					if lo, ok := hex4(data, i+8); !ok || lo < 0xDC00 || lo > 0xDFFF {
						return true
					}
					i += 11
					continue
				case ok && utf16.IsSurrogate(r):
					return true
				}
			}
			i++ // the escaped character
		}
	}
	return false
}

// hex4 reads the four hex digits of a \u escape at data[i:].
func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(data[i:i+4]), 16, 32)
	return rune(n), err == nil
}

// unknownFields reports every member of the object that dst does not take under
// exactly that name, first (when not "") leading, not just the first the decoder met.
// A member named "" is reported on "body".
func unknownFields(data []byte, dst any, first string) error {
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(data, &raw) // nil when data is not valid JSON: first alone is reported
	known := map[string]bool{}
	t := reflect.TypeOf(dst).Elem()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		known[name] = true
	}
	var v hosting.Validation
	if first != "" {
		v.Add(first, "validation.unknown_field")
	}
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		if k == "" {
			k = "body"
		}
		if !known[k] && !v.Has(k) {
			v.Add(k, "validation.unknown_field")
		}
	}
	return v.Err()
}

func typeMessage(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "validation.type_integer"
	case reflect.Float32, reflect.Float64:
		return "validation.type_number"
	case reflect.String:
		return "validation.type_string"
	case reflect.Bool:
		return "validation.type_boolean"
	case reflect.Slice, reflect.Array:
		return "validation.integer_list"
	case reflect.Map, reflect.Struct:
		return "validation.type_object"
	}
	return "validation.invalid_json"
}

func pathID(r *http.Request) (int64, error) {
	id, err := hosting.ParseID(r.PathValue("id"))
	if err != nil {
		return 0, hosting.ErrNotFound()
	}
	return id, nil
}
