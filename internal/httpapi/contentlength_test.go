package httpapi_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/berthhq/berth/internal/testenv"
)

// Every JSON answer held whole carries its length, small or large, success or
// error: a client can tell a complete answer from a cut one.
func TestContentLength(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "10", "")
	srv := runningServer(t, a)
	for _, c := range []struct {
		method, path string
		status       int
		big          bool // over net/http's 2 KiB buffer
	}{
		{"GET", "/servers/" + srv["name"].(string), 200, false},
		{"GET", "/locations", 200, true},
		{"GET", "/servers/999999", 404, false},
		{"GET", "/me", 200, false},
	} {
		req, _ := http.NewRequest(c.method, env.URL+c.path, nil)
		req.Header.Set("Authorization", "Bearer "+a.Token)
		resp, err := env.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, resp.StatusCode, c.status)
		}
		if len(resp.TransferEncoding) > 0 || resp.ContentLength < 0 {
			t.Errorf("%s %s: sent %v without a length", c.method, c.path, resp.TransferEncoding)
			continue
		}
		if c.method == "GET" && resp.ContentLength != int64(len(body)) {
			t.Errorf("%s %s: Content-Length %d, body %d bytes", c.method, c.path, resp.ContentLength, len(body))
		}
		if c.method == "GET" && c.big != (len(body) > 2048) {
			t.Errorf("%s %s: %d bytes; the case means to test a body %s 2 KiB", c.method, c.path, len(body), map[bool]string{true: "over", false: "within"}[c.big])
		}
	}
}
