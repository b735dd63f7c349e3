package httpapi_test

import (
	"testing"
	"time"

	"github.com/berthhq/berth/internal/testenv"
)

func TestOrderToRunning(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "", "")
	a.Do("GET", "/me", nil).Want(t, 200)
	a.Do("GET", "/locations", nil).Want(t, 200)
	r := a.Do("POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1}).Want(t, 201)
	srv := r.Map(t)["data"].(map[string]any)
	if srv["status"] != "provisioning" {
		t.Fatalf("status %v", srv["status"])
	}
	name := srv["name"].(string)
	got := a.WaitStatus(t, name, "running", 10*time.Second)
	if got["ipv4"] == nil {
		t.Fatal("no ipv4 after provisioning")
	}
	a.Do("POST", "/servers/"+name+"/power", map[string]any{"action": "off"}).Want(t, 200)
	a.WaitStatus(t, name, "stopped", 10*time.Second)
}
