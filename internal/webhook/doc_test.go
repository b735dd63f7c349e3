package webhook

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	clientwebhook "github.com/berthhq/berth/client/webhook"
)

// docBlocks is the fenced blocks of docs/webhooks.md that follow a marker
// "<!-- recipe: NAME -->", by NAME.
func docBlocks(t *testing.T) map[string]string {
	t.Helper()
	md, err := os.ReadFile("../../docs/webhooks.md")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?s)<!-- recipe: ([a-z]+) -->\n```[a-z]*\n(.*?)```\n")
	blocks := map[string]string{}
	for _, m := range re.FindAllStringSubmatch(string(md), -1) {
		blocks[m[1]] = m[2]
	}
	for _, name := range []string{"inputs", "signature", "output", "curl"} {
		if blocks[name] == "" {
			t.Fatalf("docs/webhooks.md has no block after <!-- recipe: %s -->", name)
		}
	}
	return blocks
}

// runDoc runs script with bash, the variables of env set, and is its output.
func runDoc(t *testing.T, script string, env map[string]string) string {
	t.Helper()
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the recipe of docs/webhooks.md fails: %v\n%s", err, script)
	}
	return strings.TrimSuffix(string(out), "\n")
}

// TestDocRecipes runs the shell of docs/webhooks.md: its inputs give its output, and
// its signature is Berth's on inputs of this test's own.
func TestDocRecipes(t *testing.T) {
	t.Parallel()
	needOpenSSL(t, "the openssl recipe of docs/webhooks.md")
	b := docBlocks(t)
	if got, want := runDoc(t, b["inputs"]+b["signature"], nil), strings.TrimSpace(b["output"]); got != want || got != specSignature {
		t.Errorf("the doc's recipe prints %q, the doc says %q, want %q", got, want, specSignature)
	}
	secret, _ := NewSecret()
	for _, body := range []string{`{}`, "{\"data\":{\"name\":\"ü %s \\\\ \\\"q\\\"\",\n\"x\":1}}\n"} {
		at := time.Now()
		want, err := Sign("evt_7", at, []byte(body), secret)
		if err != nil {
			t.Fatal(err)
		}
		env := map[string]string{"secret": secret, "id": "evt_7", "timestamp": strconv.FormatInt(at.Unix(), 10), "body": body}
		if got := runDoc(t, b["signature"], env); got != want {
			t.Errorf("body %q: the doc's recipe prints %q, Berth signs %q", body, got, want)
		}
	}
}

// TestDocCurl sends the doc's curl delivery to a local receiver that verifies it with
// client/webhook.Verify.
func TestDocCurl(t *testing.T) {
	t.Parallel()
	needOpenSSL(t, "the curl example of docs/webhooks.md")
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("SKIPPED: curl is not installed; the doc's curl example is not run")
	}
	b := docBlocks(t)
	secret, _ := NewSecret()
	var mu sync.Mutex
	var verified []string
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := clientwebhook.Verify(secret, r.Header, body); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		mu.Lock()
		verified = append(verified, r.Header.Get("webhook-id")+" "+string(body))
		mu.Unlock()
	}))
	defer s.Close()
	env := map[string]string{
		"secret": secret, "id": "evt_8", "timestamp": strconv.FormatInt(time.Now().Unix(), 10),
		"body": `{"type":"webhook.test","timestamp":"2026-03-01T11:00:00Z","data":{}}`, "url": s.URL + "/hook",
	}
	runDoc(t, b["signature"]+b["curl"], env)
	mu.Lock()
	defer mu.Unlock()
	if want := "evt_8 " + env["body"]; len(verified) != 1 || verified[0] != want {
		t.Errorf("the receiver verified %q, want %q", verified, want)
	}
}
