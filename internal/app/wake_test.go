package app_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/testenv"
)

// A committed operation is picked up at once, not at the queue's next poll: with a
// poll every 30 s, ordering a server and powering it off each end in a fraction of
// that (the simulated driver takes milliseconds).
func TestOperationsDoNotWaitForThePoll(t *testing.T) {
	t.Parallel()
	const poll = 30 * time.Second
	e := testenv.New(t, testenv.Options{FetchPoll: poll})
	a := e.NewAccount("en", "", "")
	// River fetches once as it starts; let that pass so the next fetch is the poll's.
	time.Sleep(200 * time.Millisecond)

	// within runs one operation and fails the test unless it ends well before the poll.
	within := func(what string, opID float64) {
		t.Helper()
		start := time.Now()
		r := a.Do("GET", fmt.Sprintf("/operations/%d?wait=20", int64(opID)), nil).Want(t, 200)
		op := r.Map(t)["data"].(map[string]any)
		if op["status"] != "success" {
			t.Fatalf("%s: operation %v after %s, want success well before the %s poll", what, op["status"], time.Since(start), poll)
		}
	}
	r := a.Do("POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1}).Want(t, 201)
	srv := r.Map(t)["data"].(map[string]any)
	within("order", srv["operation"].(map[string]any)["id"].(float64))

	name := srv["name"].(string)
	r = a.Do("POST", "/servers/"+name+"/power", map[string]any{"action": "off"}).Want(t, 200)
	within("power off", r.Map(t)["data"].(map[string]any)["operation"].(map[string]any)["id"].(float64))
}
