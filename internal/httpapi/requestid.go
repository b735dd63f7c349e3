package httpapi

import (
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"net/http"
)

// Request ids (docs/api.md, The sandbox). Every answer of the API carries X-Request-Id, and
// the server's log line of the request names it, so that a client's report and the
// operator's log meet. A client may bring its own (a proxy's, a trace's): it is kept
// when it is exactly one X-Request-Id field of 1 to 128 visible ASCII characters
// (0x21-0x7E: no space, no control character, nothing beyond ASCII), so that it can
// be logged and echoed as it is. Anything else (no field, an empty or longer one,
// another character, or the field given twice, where neither value is the client's
// one id) is replaced by a new id.

// requestIDHeader is the header of the request id, in its canonical form.
const requestIDHeader = "X-Request-Id"

// maxRequestID is the length of the longest request id a client may bring.
const maxRequestID = 128

// requestID is the id of the request whose header is h: the client's own when it is
// valid, else a new one.
func requestID(h http.Header) string {
	if v := h[requestIDHeader]; len(v) == 1 && validRequestID(v[0]) {
		return v[0]
	}
	return newRequestID()
}

// validRequestID reports whether a client's id can be kept: 1 to maxRequestID
// visible ASCII characters.
func validRequestID(id string) bool {
	if id == "" || len(id) > maxRequestID {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

// newRequestID returns 32 random hexadecimal digits (128 bits). They come from the
// runtime's per-thread ChaCha8 generator, which takes no lock and makes no system
// call: an id must be unique, not secret.
func newRequestID() string {
	var raw [16]byte
	binary.LittleEndian.PutUint64(raw[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(raw[8:], rand.Uint64())
	var id [32]byte
	hex.Encode(id[:], raw[:])
	return string(id[:])
}
