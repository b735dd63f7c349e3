package hosting

import (
	"net/netip"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestCheckWebhookURL(t *testing.T) {
	t.Parallel()
	own := []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")}
	for _, tc := range []struct {
		url          string
		allowPrivate bool
		msg          string
	}{
		{"https://hooks.example.com/berth", false, ""},
		{"https://hooks.example.com:8443/a?b=c", false, ""},
		{"https://93.184.216.34/x", false, ""},
		{"", false, "validation.required"},
		{"   ", false, "validation.required"},
		{"https://example.com/" + strings.Repeat("a", WebhookURLMaxLen-20), false, ""},
		{"https://example.com/" + strings.Repeat("a", WebhookURLMaxLen-19), false, "validation.max_chars"},
		{"example.com/x", false, "validation.webhook_url_url"},
		{"http://example.com/x", false, "validation.webhook_url_scheme"},
		{"http://example.com/x", true, ""},
		{"ftp://example.com/x", true, "validation.webhook_url_scheme"},
		{"https://user:pw@example.com/x", false, "validation.webhook_url_userinfo"},
		{"https:///x", false, "validation.webhook_url_host"},
		{"https://127.1/x", false, "validation.webhook_url_host"},
		{"https://2130706433/x", false, "validation.webhook_url_host"},
		// Each refused class, written as a literal address.
		{"https://127.0.0.1/x", false, "validation.webhook_url_address"},
		{"https://[::1]/x", false, "validation.webhook_url_address"},
		{"https://10.1.2.3/x", false, "validation.webhook_url_address"},
		{"https://172.16.0.1/x", false, "validation.webhook_url_address"},
		{"https://172.31.255.254/x", false, "validation.webhook_url_address"},
		{"https://192.168.1.1/x", false, "validation.webhook_url_address"},
		{"https://[fc00::1]/x", false, "validation.webhook_url_address"},
		{"https://[fd12:3456::1]/x", false, "validation.webhook_url_address"},
		{"https://169.254.169.254/latest/meta-data", false, "validation.webhook_url_address"},
		{"https://100.64.0.1/x", false, "validation.webhook_url_address"},
		{"https://[::ffff:10.0.0.1]/x", false, "validation.webhook_url_address"},
		{"https://203.0.113.9/x", false, "validation.webhook_url_address"}, // an own pool
		{"https://172.32.0.1/x", false, ""},                                // just past 172.16/12
		{"http://127.0.0.1:8080/x", true, ""},
	} {
		var v Validation
		CheckWebhookURL(&v, "url", tc.url, tc.allowPrivate, own)
		got := ""
		if err := v.Err(); err != nil {
			got = err.(*Error).Fields["url"][0].ID
		}
		if got != tc.msg {
			t.Errorf("CheckWebhookURL(%.60q, private %v) = %q, want %q", tc.url, tc.allowPrivate, got, tc.msg)
		}
	}
}

func TestCheckWebhookEventTypes(t *testing.T) {
	t.Parallel()
	many := make([]string, MaxWebhookEventTypes+1)
	for i := range many {
		many[i] = "*"
	}
	for _, tc := range []struct {
		in   []string
		want []EventPattern
		msg  string
	}{
		{[]string{"*"}, []EventPattern{"*"}, ""},
		{[]string{"server.*", "operation.failed"}, []EventPattern{"server.*", "operation.failed"}, ""},
		{[]string{"webhook.test"}, []EventPattern{"webhook.test"}, ""},
		{nil, nil, "validation.required"},
		{[]string{}, nil, "validation.required"},
		{[]string{""}, nil, "validation.webhook_event_types"},
		{[]string{"server.crated"}, nil, "validation.webhook_event_types"},
		{[]string{"servers.*"}, nil, "validation.webhook_event_types"},
		{[]string{"server*"}, nil, "validation.webhook_event_types"},
		{[]string{"server.created,server.deleted"}, nil, "validation.webhook_event_types"},
		{[]string{" server.created"}, nil, "validation.webhook_event_types"},
		{[]string{"*", "*"}, nil, "validation.webhook_event_types"},
		{many, nil, "validation.max_items"},
	} {
		var v Validation
		got := CheckWebhookEventTypes(&v, "event_types", tc.in)
		msg := ""
		if err := v.Err(); err != nil {
			msg = err.(*Error).Fields["event_types"][0].ID
		}
		if msg != tc.msg || strings.Join(patterns(got), ",") != strings.Join(patterns(tc.want), ",") {
			t.Errorf("CheckWebhookEventTypes(%.40q) = %v, %q; want %v, %q", tc.in, got, msg, tc.want, tc.msg)
		}
	}
}

func patterns(ps []EventPattern) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = string(p)
	}
	return out
}

func TestWebhookWants(t *testing.T) {
	t.Parallel()
	w := Webhook{ID: 7, AccountID: 1, Enabled: true, EventTypes: []EventPattern{"server.*"}}
	all := Webhook{ID: 8, AccountID: 1, Enabled: true, EventTypes: []EventPattern{"*"}}
	ev := func(typ EventType, kind string, id int64) Event {
		return Event{AccountID: 1, Type: typ, Resource: EventResource{Type: kind, ID: id}}
	}
	for _, tc := range []struct {
		w    Webhook
		e    Event
		want bool
	}{
		{w, ev(EventServerCreated, "server", 1), true},
		{w, ev(EventOperationFailed, "operation", 1), false},
		{all, ev(EventOperationFailed, "operation", 1), true},
		{all, ev(EventWebhookCreated, "webhook", 7), true},
		// A test goes to the webhook it tests only, whatever the others' patterns.
		{all, ev(EventWebhookTest, "webhook", 7), false},
		{Webhook{ID: 7, AccountID: 1, Enabled: true, EventTypes: []EventPattern{"server.*"}}, ev(EventWebhookTest, "webhook", 7), true},
		{Webhook{ID: 8, AccountID: 1, Enabled: false, EventTypes: []EventPattern{"*"}}, ev(EventServerCreated, "server", 1), false},
		{Webhook{ID: 8, AccountID: 2, Enabled: true, EventTypes: []EventPattern{"*"}}, ev(EventServerCreated, "server", 1), false},
	} {
		if got := tc.w.Wants(tc.e); got != tc.want {
			t.Errorf("webhook %d %v (enabled %v) wants %s of %v: %v, want %v", tc.w.ID, tc.w.EventTypes, tc.w.Enabled, tc.e.Type, tc.e.Resource, got, tc.want)
		}
	}
}

func TestWebhookSecrets(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	until := now.Add(SecretOverlap)
	w := Webhook{Secret: "new", PreviousSecret: "old", PreviousUntil: &until}
	for _, tc := range []struct {
		at   time.Time
		want string
	}{
		{now, "new,old"},
		{until.Add(-time.Millisecond), "new,old"},
		{until, "new"},
		{until.Add(time.Hour), "new"},
	} {
		if got := strings.Join(w.Secrets(tc.at), ","); got != tc.want {
			t.Errorf("Secrets(%s) = %s, want %s", tc.at, got, tc.want)
		}
	}
	if got := (&Webhook{Secret: "only"}).Secrets(now); len(got) != 1 {
		t.Errorf("no previous secret: %v", got)
	}
}

func TestAnswerText(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 600) // 1200 bytes: the cap cuts a character in two
	for _, tc := range []struct {
		in   []byte
		want string
	}{
		{nil, ""},
		{[]byte("ok"), "ok"},
		{[]byte("a\x00b"), "a\uFFFDb"},
		{[]byte("a\xffb"), "a\uFFFDb"},
		{[]byte(strings.Repeat("x", 2000)), strings.Repeat("x", 1024)},
		{[]byte(long), strings.Repeat("é", 512)},
		{[]byte("x" + long), "x" + strings.Repeat("é", 511) + "\uFFFD"},
	} {
		got := AnswerText(tc.in)
		if got != tc.want || !utf8.ValidString(got) || strings.Contains(got, "\x00") {
			t.Errorf("AnswerText(%.20q) = %.20q (%d bytes), want %.20q", tc.in, got, len(got), tc.want)
		}
	}
}
