package webhook_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/berthhq/berth/client/webhook"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// newReceiver is a receiver of Berth's webhooks (docs/webhooks.md shows it): it
// verifies each delivery and handles each event once, however often it comes.
func newReceiver(secret string, handle func(id, typ string, data json.RawMessage) error) http.Handler {
	var mu sync.Mutex
	handled := map[string]bool{} // a real receiver keeps the ids in its database
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
			return
		}
		// The body exactly as it came: JSON parsed and serialized again would not verify.
		if err := webhook.Verify(secret, r.Header, body); err != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var event struct {
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(body, &event); err != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		id := r.Header.Get(webhook.HeaderID)
		mu.Lock()
		defer mu.Unlock()
		if !handled[id] { // delivered before: answer 2xx again, do nothing
			if err := handle(id, event.Type, event.Data); err != nil {
				http.Error(w, "try again", http.StatusServiceUnavailable) // Berth retries
				return
			}
			handled[id] = true
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// A receiver verifies each delivery, and handles an event delivered twice once.
func Example() {
	secret := "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" // from POST /webhooks
	receiver := newReceiver(secret, func(id, typ string, data json.RawMessage) error {
		fmt.Println("handled", id, typ, string(data))
		return nil
	})
	body := `{"type":"server.created","timestamp":"2026-03-01T11:00:00Z","data":{"id":12}}`
	for _, d := range []struct{ secret, id string }{
		{secret, "evt_1"},
		{secret, "evt_1"}, // the same event again: a retry or a redelivery
		{"whsec_3q2+7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "evt_2"}, // not Berth
	} {
		w := httptest.NewRecorder()
		receiver.ServeHTTP(w, delivery(d.secret, d.id, body))
		fmt.Println(d.id, w.Code)
	}
	// Output:
	// handled evt_1 server.created {"id":12}
	// evt_1 204
	// evt_1 204
	// evt_2 401
}

// delivery is a request as Berth sends it, signed with secret now.
func delivery(secret, id, body string) *http.Request {
	now := time.Now()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		panic(err)
	}
	sig, err := wh.Sign(id, now, []byte(body))
	if err != nil {
		panic(err)
	}
	r := httptest.NewRequest(http.MethodPost, "/berth-webhooks", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set(webhook.HeaderID, id)
	r.Header.Set(webhook.HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	r.Header.Set(webhook.HeaderSignature, sig)
	return r
}
