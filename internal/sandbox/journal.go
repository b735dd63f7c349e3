package sandbox

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits of the request journal (docs/api.md, The sandbox; api/openapi.yaml states them).
const (
	// MaxJournal is how many requests the journal keeps per account, the newest.
	MaxJournal = 1000
	// MaxJournalBody is how much of a request's or a response's body the journal
	// keeps: at most 2 × 1000 × 16 KiB = 32 MiB per account.
	MaxJournalBody = 16 << 10
	// Redacted stands for a secret the journal does not keep.
	Redacted = "[redacted]"
)

// Entry is one /v1 request of an account, as the journal keeps it.
type Entry struct {
	ID                  int64
	Time                time.Time
	Method, Path, Query string
	Status              int
	Duration            time.Duration
	// RequestID and IdempotencyKey are "" when there were none.
	RequestID, IdempotencyKey string
	// RequestBody and ResponseBody are JSON values (JournalBody): nil when empty.
	RequestBody, ResponseBody json.RawMessage
}

// journal is a ring of an account's latest entries.
type journal struct {
	ring  []Entry
	start int // index of the oldest entry once the ring is full
}

func (j *journal) add(e Entry) {
	if len(j.ring) < MaxJournal {
		j.ring = append(j.ring, e)
		return
	}
	j.ring[j.start] = e
	j.start = (j.start + 1) % MaxJournal
}

// Record adds a request of the account to its journal, numbering it, without the
// secrets in its path, query and headers (RedactString). Its bodies must come from
// JournalBody (no secret is kept).
func (s *State) Record(accountID int64, e Entry) {
	if s == nil {
		return
	}
	for _, f := range []*string{&e.Path, &e.Query, &e.RequestID, &e.IdempotencyKey} {
		*f = RedactString(*f)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e.ID = s.entrySeq.Add(1)
	s.of(accountID).journal.add(e)
}

// Requests returns the account's latest limit requests, newest first.
func (s *State) Requests(accountID int64, limit int) []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []Entry{}
	a, ok := s.accounts[accountID]
	if !ok {
		return out
	}
	j := &a.journal
	for i := len(j.ring) - 1; i >= 0 && len(out) < limit; i-- {
		out = append(out, j.ring[(j.start+i)%len(j.ring)])
	}
	return out
}

// Capture keeps the first MaxJournalBody bytes written to it, and one more to tell
// that there were more: a body as it passes (a tee of a request's body or of a
// ResponseWriter).
type Capture struct {
	buf []byte
}

// Write implements io.Writer; it never fails.
func (c *Capture) Write(p []byte) (int, error) {
	if room := MaxJournalBody + 1 - len(c.buf); room > 0 {
		c.buf = append(c.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// Bytes returns what it kept.
func (c *Capture) Bytes() []byte { return c.buf }

// Body returns what passed as the journal keeps it (JournalBody).
func (c *Capture) Body() json.RawMessage { return JournalBody(c.buf) }

// JournalBody is a body as the journal keeps it, from its first bytes data (more
// than MaxJournalBody of them: it was longer):
//   - nil when it is empty;
//   - a whole body that is JSON (and UTF-8), as that JSON value, every member named
//     for a secret (secretNames, at any depth, in any case) holding "[redacted]",
//     and every string without its secrets (RedactString);
//   - anything else (text that is not JSON, or a body longer than MaxJournalBody,
//     cut there and ended with " … [truncated]") as a JSON string, with the value
//     that follows any secret member's name replaced by "[redacted]", and without
//     the secrets of RedactString.
func JournalBody(data []byte) json.RawMessage {
	if len(data) == 0 {
		return nil
	}
	cut := len(data) > MaxJournalBody
	if !cut && utf8.Valid(data) && json.Valid(data) {
		if out, ok := redactJSON(data); ok {
			return out
		}
	}
	if cut {
		data = data[:MaxJournalBody]
		// The cut may have split a character: drop its first bytes.
		for i := 0; i < utf8.UTFMax && len(data) > 0 && !utf8.Valid(data); i++ {
			data = data[:len(data)-1]
		}
	}
	text := redactText(strings.ToValidUTF8(string(data), "\uFFFD"))
	if cut {
		text += " … [truncated]"
	}
	out, _ := json.Marshal(text)
	return out
}

// redactJSON re-writes a JSON value compactly, members in their order, with the value
// of every secret member replaced.
func redactJSON(data []byte) (json.RawMessage, bool) {
	var out bytes.Buffer
	if !writeRedacted(&out, data) {
		return nil, false
	}
	return out.Bytes(), true
}

func writeRedacted(out *bytes.Buffer, raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return false
	}
	switch raw[0] {
	case '{':
		dec := json.NewDecoder(bytes.NewReader(raw))
		if _, err := dec.Token(); err != nil {
			return false
		}
		out.WriteByte('{')
		for i := 0; dec.More(); i++ {
			tok, err := dec.Token()
			name, ok := tok.(string)
			if err != nil || !ok {
				return false
			}
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return false
			}
			if i > 0 {
				out.WriteByte(',')
			}
			key, _ := json.Marshal(RedactString(name))
			out.Write(key)
			out.WriteByte(':')
			if secretKey(name) {
				out.WriteString(`"` + Redacted + `"`)
			} else if !writeRedacted(out, v) {
				return false
			}
		}
		out.WriteByte('}')
		return true
	case '[':
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return false
		}
		out.WriteByte('[')
		for i, item := range items {
			if i > 0 {
				out.WriteByte(',')
			}
			if !writeRedacted(out, item) {
				return false
			}
		}
		out.WriteByte(']')
		return true
	case '"':
		var str string
		if err := json.Unmarshal(raw, &str); err != nil {
			return false
		}
		if clean := RedactString(str); clean != str {
			b, _ := json.Marshal(clean)
			out.Write(b)
			return true
		}
	}
	return json.Compact(out, raw) == nil
}
