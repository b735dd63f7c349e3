package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/internal/hosting"
)

// MaxBody is the largest request body accepted (docs/api.md, Wire format).
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
	codeUpgradeRequired:            http.StatusUpgradeRequired,
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
// smallBody is the size up to which net/http holds a handler's whole answer and sends
// its Content-Length itself (its bufferBeforeChunkingSize, 2048 bytes): a larger one
// gets the header from writeJSON, or it would go out chunked.
const smallBody = 2048

// jsonContentType is the Content-Type of a JSON answer, shared as securityHeaders are.
var jsonContentType = []string{"application/json; charset=utf-8"}

func writeJSON(w http.ResponseWriter, status int, body any) {
	var buf []byte
	if a, ok := body.(jsonAppender); ok {
		// A server (GET /v1/servers/{id}, the API's hottest answer): written by hand
		// into a pooled buffer, the same bytes as json.Marshal (api.Server.AppendJSON).
		p := jsonBufs.Get().(*[]byte)
		defer func() {
			if cap(buf) <= 64<<10 {
				*p = buf[:0]
				jsonBufs.Put(p)
			}
		}()
		buf, ok = a.AppendJSON((*p)[:0])
		if !ok {
			buf = nil
		}
	}
	if buf == nil {
		var err error
		if buf, err = json.Marshal(body); err != nil {
			http.Error(w, `{"message":"internal error","code":"internal"}`, http.StatusInternalServerError)
			return
		}
	}
	h := w.Header()
	h["Content-Type"] = jsonContentType
	if len(buf)+1 > smallBody {
		h["Content-Length"] = []string{strconv.Itoa(len(buf) + 1)}
	} // else net/http sends the Content-Length of the whole answer it holds, outside the header map
	w.WriteHeader(status)
	buf = append(buf, '\n')
	_, _ = w.Write(buf)
}

// checkEncoding refuses a body sent with a Content-Encoding (gzip, br, ...): Berth
// reads bodies as they come, so a compressed one would be taken for its bytes (a
// JSON body then reads as text that is not UTF-8, an attachment is stored
// compressed). identity, the coding that changes nothing, is taken.
func checkEncoding(r *http.Request) error {
	for _, v := range r.Header.Values("Content-Encoding") {
		for c := range strings.SplitSeq(v, ",") {
			if c = strings.TrimSpace(c); c != "" && !strings.EqualFold(c, "identity") {
				return hosting.Invalid("Content-Encoding", "validation.content_encoding")
			}
		}
	}
	return nil
}

// jsonAppender is a body that writes its own JSON (api.One[api.Server]); ok false
// when it cannot, and json.Marshal writes it.
type jsonAppender interface {
	AppendJSON(b []byte) (out []byte, ok bool)
}

var jsonBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// decode reads a JSON object body into dst strictly: a member dst does not take
// under exactly that name is a validation error on that member; null on a field that
// does not take null (only a field whose type decodes null itself, api.Nullable,
// does), or a null item of a list, is an error on that field; a value of the wrong
// type names its field; anything that is not one JSON object is an error on "body".
// An empty body counts as {}.
func decode(r *http.Request, dst any) error { return decodeMax(r, dst, MaxBody) }

// decodeMax is decode with a body cap of max bytes.
func decodeMax(r *http.Request, dst any, max int64) error {
	if err := checkEncoding(r); err != nil {
		return err
	}
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
	members, err := objectMembers(data)
	if err != nil {
		return hosting.Invalid("body", "validation.invalid_json")
	}
	// The members are checked by their exact names before anything is decoded:
	// encoding/json matches names case-insensitively, Unicode folding included ("ſ"
	// for "s"), so {"PLAN_ID": 1} would set plan_id; and it reads null as "leave
	// alone", so {"display_name": null} would be taken for an absent field.
	if err := checkMembers(members, reflect.TypeOf(dst).Elem()); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err = dec.Decode(dst)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "body"
		}
		return hosting.Invalid(field, typeMessage(te.Type))
	}
	return hosting.Invalid("body", "validation.invalid_json")
}

// unmarshaler is a type that decodes its JSON itself, null included.
var unmarshaler = reflect.TypeFor[json.Unmarshaler]()

// takesNull reports whether a field of type t takes null: only a type that decodes
// null itself (api.Nullable records it) does.
func takesNull(t reflect.Type) bool {
	return t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(unmarshaler)
}

// member is a member of a JSON object.
type member struct {
	name  string
	value json.RawMessage
}

// objectMembers lists the members of one JSON object in the order they are written
// (a name written twice, twice), or fails when data is not one JSON object.
func objectMembers(data []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var m member
		m.name, _ = tok.(string)
		if err := dec.Decode(&m.value); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one value")
	}
	return out, nil
}

// checkMembers reports, all at once in the order of t's fields (unknown members
// after them, as the body orders them), every member that t has no field for under
// exactly that name, every null given to a field that does not take null, and every
// null item of a list field. A member named "" is reported on "body".
func checkMembers(members []member, t reflect.Type) error {
	fields := map[string]reflect.Type{}
	var order []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		fields[name] = t.Field(i).Type
		order = append(order, name)
	}
	var v hosting.Validation
	for _, m := range members {
		k := m.name
		ft, known := fields[k]
		raw := bytes.TrimSpace(m.value)
		switch {
		case !known && k == "":
			k = "body"
			fallthrough
		case !known:
			if !v.Has(k) {
				v.Add(k, "validation.unknown_field")
			}
		case string(raw) == "null" && !takesNull(ft):
			if !v.Has(k) {
				v.Add(k, "validation.not_null")
			}
		case len(raw) > 0 && raw[0] == '[' && ft.Kind() == reflect.Slice && !takesNull(ft.Elem()) && !v.Has(k):
			var list []json.RawMessage
			if json.Unmarshal(raw, &list) == nil && slices.ContainsFunc(list, func(item json.RawMessage) bool {
				return string(bytes.TrimSpace(item)) == "null"
			}) {
				v.Add(k, "validation.null_in_list")
			}
		}
	}
	return v.Err(order...)
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

// queryValue returns the value of the query parameter name and whether it was given
// once. One given more than once is an error on it in v (and not given): which value
// the client meant is not Berth's to guess (?wait=1&wait=0). Every query parameter
// the API reads is read through here.
func queryValue(r *http.Request, name string, v *hosting.Validation) (string, bool) {
	vals := r.URL.Query()[name]
	switch len(vals) {
	case 0:
		return "", false
	case 1:
		return vals[0], true
	}
	v.Add(name, "validation.query_repeated")
	return "", false
}

func pathID(r *http.Request) (int64, error) {
	id, err := hosting.ParseID(r.PathValue("id"))
	if err != nil {
		return 0, hosting.ErrNotFound()
	}
	return id, nil
}
