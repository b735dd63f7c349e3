package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// Issue 12, item 2: a burst of orders, each under its own Idempotency-Key, is cut by a
// SIGKILL 30-100 ms in; after the restart every key is sent again with the same body,
// and its answer must be the first one: byte for byte when the client got that, else
// the server the order made (replayed) or a fresh order (its change never committed)
// — never "still running", never "answer lost", never a second server. Its own
// account has credit to spare, so that the orders are about idempotency, not money.

// A burst is burstSenders clients sending burstEach orders each, one after another,
// so that a kill 30-100 ms in finds some answered, some in flight, some not yet sent.
const (
	burstSenders = 8
	burstEach    = 8
	burstSize    = burstSenders * burstEach
)

// burstAnswer is one answer to one request of a key.
type burstAnswer struct {
	code     int
	body     []byte
	replayed bool
	err      error // the answer was lost
}

type burstKey struct {
	key, name string
	first     burstAnswer
}

type burst struct {
	round int
	keys  []*burstKey
	wg    sync.WaitGroup
}

func burstClient() *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
}

func (k *burstKey) body() []byte {
	b, _ := json.Marshal(map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1, "display_name": k.name})
	return b
}

// send posts the key's order once.
func (k *burstKey) send(client *http.Client, base, token string) burstAnswer {
	req, _ := http.NewRequest("POST", base+"/servers", bytes.NewReader(k.body()))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", k.key)
	resp, err := client.Do(req)
	if err != nil {
		return burstAnswer{err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return burstAnswer{err: err}
	}
	return burstAnswer{code: resp.StatusCode, body: body, replayed: resp.Header.Get("Idempotent-Replayed") == "true"}
}

// startBurst starts the burst's senders; wait for their first answers with b.wg.
func startBurst(round int, base, token string) *burst {
	b := &burst{round: round}
	client := burstClient()
	for s := range burstSenders {
		var mine []*burstKey
		for i := range burstEach {
			name := fmt.Sprintf("fault-burst-r%d-%d-%d", round, s, i)
			k := &burstKey{key: name, name: name}
			b.keys, mine = append(b.keys, k), append(mine, k)
		}
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			for _, k := range mine {
				k.first = k.send(client, base, token)
			}
		}()
	}
	return b
}

// final reports whether an answer is one a key keeps (docs/api.md, Idempotency and operations: 409, 429 and
// 5xx are not remembered).
func final(a burstAnswer) bool {
	return a.err == nil && a.code < 500 && a.code != 409 && a.code != 429
}

// retry sends every key of the burst again, twice (the keys side by side), and files
// each key's order in the log as the workload's other orders are. It returns the
// problems it saw.
func (b *burst) retry(base, token string, log *faultLog) (problems []string, firstLost, replayed int) {
	client := burstClient()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, k := range b.keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, lost, rep := k.retry(client, base, token, b.round, log)
			mu.Lock()
			problems, firstLost, replayed = append(problems, p...), firstLost+lost, replayed+rep
			mu.Unlock()
		}()
	}
	wg.Wait()
	return problems, firstLost, replayed
}

func (k *burstKey) retry(client *http.Client, base, token string, round int, log *faultLog) (problems []string, firstLost, replayed int) {
	again := k.send(client, base, token)
	twice := k.send(client, base, token)
	bad := func(format string, args ...any) {
		problems = append(problems, fmt.Sprintf("burst of round %d, key %s: ", round, k.key)+fmt.Sprintf(format, args...))
	}
	if again.err != nil || twice.err != nil {
		bad("a retry got no answer: %v, %v", again.err, twice.err)
		return problems, 0, 0
	}
	if final(k.first) {
		if again.code != k.first.code || !bytes.Equal(again.body, k.first.body) || !again.replayed {
			bad("the retry answered %d (replayed %v) %s; the first answer was %d %s", again.code, again.replayed, again.body,
				k.first.code, k.first.body)
		}
	} else {
		firstLost++
		if again.replayed {
			replayed++
		}
		if again.code != http.StatusCreated {
			bad("first answer %s; the retry answered %d %s, want 201 (the first answer again, or the order run afresh)",
				describeAnswer(k.first), again.code, again.body)
		}
	}
	if twice.code != again.code || !bytes.Equal(twice.body, again.body) || !twice.replayed {
		bad("the second retry answered %d (replayed %v) %s; the first retry %d %s", twice.code, twice.replayed, twice.body,
			again.code, again.body)
	}
	r := faultReq{round: int64(round), client: -2, kind: "order", name: k.name}
	var m struct {
		Data struct {
			ID        int64  `json:"id"`
			Name      string `json:"name"`
			Display   string `json:"display_name"`
			Operation *struct {
				ID int64 `json:"id"`
			} `json:"operation"`
		} `json:"data"`
	}
	switch {
	case again.code == http.StatusCreated && json.Unmarshal(again.body, &m) == nil && m.Data.Operation != nil:
		r.outcome, r.server, r.srvName, r.op = accepted, m.Data.ID, m.Data.Name, m.Data.Operation.ID
		if m.Data.Display != k.name {
			bad("answered server %d named %q", m.Data.ID, m.Data.Display)
		}
	case again.code == http.StatusCreated:
		bad("201 without a server and its operation: %s", again.body)
		r.outcome = unknown
	default:
		r.outcome, r.code = rejected, again.code
	}
	log.add(r)
	return problems, firstLost, replayed
}

func describeAnswer(a burstAnswer) string {
	if a.err != nil {
		return "lost (" + a.err.Error() + ")"
	}
	return fmt.Sprintf("%d %s", a.code, a.body)
}
