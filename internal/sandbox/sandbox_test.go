package sandbox

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
)

func TestJournalBody(t *testing.T) {
	t.Parallel()
	long := `{"script": "` + strings.Repeat("x", MaxJournalBody) + `", "root_password": "cut-secret"}`
	const ticket = "Zm9vYmFyYmF6cXV4cXV1eHF1dXhxdXV4cXV1eHF1dXg"
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", ``, `null`},
		{"object, order kept", `{"b": 1, "a": [1, 2.50, "x"], "root_password": "s3cret"}`, `{"b":1,"a":[1,2.50,"x"],"root_password":"[redacted]"}`},
		{"deep, any case", `{"x": [{"y": {"Root_Password": {"nested": true}}}]}`, `{"x":[{"y":{"Root_Password":"[redacted]"}}]}`},
		{"escaped key", `{"root\u005fpassword": "s3cret"}`, `{"root_password":"[redacted]"}`},
		{"repeated key", `{"root_password": "a", "root_password": "b"}`, `{"root_password":"[redacted]","root_password":"[redacted]"}`},
		{"scalar", ` 42 `, `42`},
		{"a string value is not a key", `{"note": "root_password"}`, `{"note":"root_password"}`},
		{"not JSON", `{"root_password": "s3cret", `, `"{\"root_password\": \"[redacted]\", "`},
		{"not JSON, unterminated", `{"root_password": "s3cr`, `"{\"root_password\": \"[redacted]\""`},
		{"form", `name=x&root_password=s3cret&y=1`, `"name=x\u0026root_password=\"[redacted]\"\u0026y=1"`},
		{"invalid UTF-8", "a\xffb", "\"a\uFFFDb\""},
		{"invalid UTF-8 in JSON", "{\"root_password\": \"a\xffb\"}", `"{\"root_password\": \"[redacted]\"}"`},
		{"every secret name", `{"password": "p", "Secret": 12, "ticket": ["t"], "root_password": null}`,
			`{"password":"[redacted]","Secret":"[redacted]","ticket":"[redacted]","root_password":"[redacted]"}`},
		{"a console ticket's url", `{"data": {"url": "wss://h/v1/servers/4/console?ticket=berthc_` + ticket + `", "expires_at": "x"}}`,
			`{"data":{"url":"wss://h/v1/servers/4/console?ticket=[redacted]","expires_at":"x"}}`},
		{"a ticket not in a url", `{"note": "use berthc_` + ticket + ` soon"}`, `{"note":"use [redacted] soon"}`},
		{"an escaped ticket", `{"note": "berthc\u005f` + ticket + `"}`, `{"note":"[redacted]"}`},
		{"a token anywhere", `{"display_name": "berth_` + ticket + `", "list": ["x berth_sandbox_` + ticket + `"]}`,
			`{"display_name":"[redacted]","list":["x [redacted]"]}`},
		{"a token as a member's name", `{"berth_` + ticket + `": 1}`, `{"[redacted]":1}`},
		{"a url's other parameters stay", `{"u": "https://h/p?a=1&Ticket=abc&b=2#f"}`, `{"u":"https://h/p?a=1\u0026Ticket=[redacted]\u0026b=2#f"}`},
		{"a string that is no secret stays as sent", `{"a": "x\u0041 berth_short", "b": "ticket", "c": "berthc_"}`, `{"a":"x\u0041 berth_short","b":"ticket","c":"berthc_"}`},
		{"the token of GET /me names none", `{"data": {"token": {"id": 3, "name": "ci"}}}`, `{"data":{"token":{"id":3,"name":"ci"}}}`},
		{"not JSON, a ticket", `{"url": "ws://h/v1/servers/4/console?ticket=berthc_` + ticket + `", `, `"{\"url\": \"ws://h/v1/servers/4/console?ticket=\"[redacted]\", "`},
		{"not JSON, a password", `{"password": "pw", "secret": s3`, `"{\"password\": \"[redacted]\", \"secret\": \"[redacted]\""`},
	} {
		got := string(JournalBody([]byte(tc.in)))
		if tc.in == "" && JournalBody(nil) != nil {
			t.Errorf("%s: not nil", tc.name)
		}
		if got != tc.want && !(tc.in == "" && got == "") {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	var c Capture
	_, _ = c.Write([]byte(long[:100]))
	_, _ = c.Write([]byte(long[100:]))
	var s string
	if err := json.Unmarshal(c.Body(), &s); err != nil {
		t.Fatalf("a cut body is not a JSON string: %v", err)
	}
	if !strings.HasSuffix(s, " … [truncated]") || strings.Contains(s, "cut-secret") || len(s) > MaxJournalBody+len(" … [truncated]") {
		t.Errorf("cut body: %d bytes ending %q", len(s), s[len(s)-40:])
	}
	// A cut in the middle of a character drops the character.
	c = Capture{}
	_, _ = c.Write([]byte(strings.Repeat("a", MaxJournalBody-1) + "é" + "tail"))
	if err := json.Unmarshal(c.Body(), &s); err != nil || strings.ContainsRune(s, '\uFFFD') || !strings.HasPrefix(s, strings.Repeat("a", MaxJournalBody-1)+" …") {
		t.Errorf("cut in a character: %v %.20q", err, s[MaxJournalBody-5:])
	}
}

// TestRecordRedacts: the path, query and headers of an entry are kept without their
// secrets: a ticket or token anywhere, the value of a query parameter named for one.
func TestRecordRedacts(t *testing.T) {
	t.Parallel()
	s := New()
	tok, _ := ops.NewTokenSecret()
	s.Record(1, Entry{Path: "/v1/servers/" + tok, Query: "ticket=berthc_Zm9vYmFyYmF6cXV4cXV1eHF1dXhxdXV4cXV1eHF1dXg&a=1&password=x",
		RequestID: "req " + tok, IdempotencyKey: tok})
	got := s.Requests(1, 1)[0]
	want := Entry{ID: got.ID, Path: "/v1/servers/[redacted]", Query: "ticket=[redacted]&a=1&password=[redacted]", RequestID: "req [redacted]",
		IdempotencyKey: "[redacted]"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("recorded %+v, want %+v", got, want)
	}
}

// TestSecretPrefixes: the secrets the API makes, as it makes them, are found by
// their prefix, whole.
func TestSecretPrefixes(t *testing.T) {
	t.Parallel()
	tok, _ := ops.NewTokenSecret()
	for _, secret := range []string{tok, ops.ConsoleTicketPrefix + "Zm9vYmFyYmF6cXV4cXV1eHF1dXhxdXV4cXV1eHF1dXg",
		"berth_sandbox_" + strings.Repeat("a", 32)} {
		if got := RedactString("<" + secret + ">"); got != "<"+Redacted+">" {
			t.Errorf("%s: %s", secret, got)
		}
	}
	if !slices.Contains(secretPrefixes, ops.TokenPrefix) || !slices.Contains(secretPrefixes, ops.ConsoleTicketPrefix) {
		t.Errorf("secretPrefixes %v lacks the API's %q or %q", secretPrefixes, ops.TokenPrefix, ops.ConsoleTicketPrefix)
	}
}

func TestJournalRing(t *testing.T) {
	t.Parallel()
	s := New()
	for i := range MaxJournal + 10 {
		s.Record(1, Entry{Path: "/v1/me", Status: 200 + i%2})
	}
	s.Record(2, Entry{Path: "/v1/apps"})
	all := s.Requests(1, MaxJournal+100)
	if len(all) != MaxJournal {
		t.Fatalf("%d entries", len(all))
	}
	for i := 1; i < len(all); i++ {
		if all[i].ID != all[i-1].ID-1 {
			t.Fatalf("entries %d and %d: ids %d, %d", i-1, i, all[i-1].ID, all[i].ID)
		}
	}
	if all[0].ID != MaxJournal+10 || all[len(all)-1].ID != 11 {
		t.Errorf("ids %d..%d, want %d..11", all[0].ID, all[len(all)-1].ID, MaxJournal+10)
	}
	if got := s.Requests(2, 50); len(got) != 1 || got[0].Path != "/v1/apps" {
		t.Errorf("account 2: %v", got)
	}
	if got := s.Requests(3, 50); got == nil || len(got) != 0 {
		t.Errorf("account 3: %v", got)
	}
}

// TestTakeConcurrently: a fault of times N applies to exactly N of many concurrent
// matches.
func TestTakeConcurrently(t *testing.T) {
	t.Parallel()
	s := New()
	routes := []Route{{Method: "GET", Path: "/me", Statuses: []int{429, 500, 503}}}
	times := int64(37)
	if _, err := s.AddFault(1, FaultSpec{Status: ptr(int64(503)), Times: &times}, routes); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	applied := 0
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if _, ok := s.TakeHTTPFault(1, routes[0]); ok {
					mu.Lock()
					applied++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if applied != 37 {
		t.Errorf("applied %d times, want 37", applied)
	}
	if f := s.Faults(1); len(f) != 1 || f[0].Remaining != 0 {
		t.Errorf("faults %v", f)
	}
	if _, ok := s.TakeHTTPFault(2, routes[0]); ok {
		t.Error("another account met the fault")
	}
}

// TestOperationFaultOncePerOperation: an operation takes a fault on its first
// attempt only, and its later attempts meet the same one.
func TestOperationFaultOncePerOperation(t *testing.T) {
	t.Parallel()
	s := New()
	slow := 3.0
	if _, err := s.AddFault(1, FaultSpec{Operation: ptr("power"), Slow: &slow}, nil); err != nil {
		t.Fatal(err)
	}
	if fail, got := s.OperationFault(1, 10, hosting.OpReinstall, true); fail || got != 0 {
		t.Errorf("a reinstall met the power fault")
	}
	if fail, got := s.OperationFault(1, 11, hosting.OpPower, true); fail || got != 3 {
		t.Errorf("first attempt: fail %v slow %v", fail, got)
	}
	if fail, got := s.OperationFault(1, 11, hosting.OpPower, false); fail || got != 3 {
		t.Errorf("second attempt: fail %v slow %v, want the same fault", fail, got)
	}
	if _, got := s.OperationFault(1, 12, hosting.OpPower, true); got != 0 {
		t.Errorf("the next operation met the used fault")
	}
	if _, got := s.OperationFault(1, 13, hosting.OpPower, false); got != 0 {
		t.Errorf("a later attempt of an operation that met none met one")
	}
	var nilState *State
	if fail, got := nilState.OperationFault(1, 1, hosting.OpPower, true); fail || got != 0 {
		t.Error("a nil sandbox injects")
	}
}

func ptr[T any](v T) *T { return &v }
