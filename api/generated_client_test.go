package api_test

import (
	"context"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/internal/apitest"
	"github.com/berthhq/berth/internal/testenv"
)

// The generator and the runtime its clients import, pinned. `go run module@version`
// builds the generator in a module of its own (its own dependency versions, not
// Berth's), once: the build cache keeps it, and the module cache its sources.
const (
	oapiCodegen = "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2"
	oapiRuntime = "github.com/oapi-codegen/runtime v1.9.0"
)

// EnvCodegenRequired makes a generator that cannot be obtained (no module proxy, no
// module cache) a failure instead of a skip; .ci/run sets it.
const EnvCodegenRequired = "BERTH_CODEGEN_REQUIRED"

// TestGeneratedClient generates a Go client from api/openapi.yaml with oapi-codegen,
// as a client developer would, compiles testdata/genclient against it and runs that
// program against a live Berth (issue 14). The program compiles only if error codes
// are typed strings with constants, metric timestamps int64 and nullable fields
// pointers; it passes only if Berth's real answers decode into those types. Every
// answer it gets also goes through apitest's check against the document.
func TestGeneratedClient(t *testing.T) {
	t.Parallel()
	goBin := goCommand(t)
	dir := t.TempDir()
	env := goEnv()

	if out, err := goRun(t, dir, env, goBin, "run", oapiCodegen, "--version"); err != nil {
		codegenUnavailable(t, "the generator "+oapiCodegen+" cannot be obtained", out, err)
	}

	spec := filepath.Join(dir, "openapi.yaml")
	must(t, os.WriteFile(spec, api.OpenAPIYAML, 0o644))
	must(t, os.Mkdir(filepath.Join(dir, "berthclient"), 0o755))
	if out, err := goRun(t, dir, env, goBin, "run", oapiCodegen, "-generate", "types,client",
		"-package", "berthclient", "-o", filepath.Join("berthclient", "client.gen.go"), spec); err != nil {
		t.Fatalf("oapi-codegen rejects api/openapi.yaml: %v\n%s", err, out)
	}

	program, err := os.ReadFile(filepath.Join("testdata", "genclient", "main.go"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "main.go"), program, 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "go.mod"),
		[]byte("module berthclientcheck\n\ngo 1.26\n\nrequire "+oapiRuntime+"\n"), 0o644))
	if out, err := goRun(t, dir, env, goBin, "mod", "tidy"); err != nil {
		codegenUnavailable(t, "the generated client's module ("+oapiRuntime+") cannot be completed", out, err)
	}
	bin := filepath.Join(dir, "genclient")
	if out, err := goRun(t, dir, env, goBin, "build", "-o", bin, "."); err != nil {
		t.Fatalf("the generated client does not compile with testdata/genclient: %v\n%s", err, out)
	}

	// A live Berth, behind a proxy that checks every answer against the document.
	berth := testenv.New(t)
	acct := berth.NewAccount("en", "100", "")
	target, err := url.Parse(berth.Root)
	must(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = apitest.New(t).Transport(t, nil)
	front := httptest.NewServer(proxy)
	t.Cleanup(front.Close)

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = append(os.Environ(), "BERTH_URL="+front.URL+"/v1", "BERTH_TOKEN="+acct.Token)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the program on the generated client failed: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// goCommand returns the go command of the toolchain running this test.
func goCommand(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("no go command on PATH nor in GOROOT: %v", err)
	}
	return p
}

// goEnv is the environment of the go commands: the module of the temporary
// directory alone (no workspace), without a -mod flag, which `go run pkg@version`
// refuses. Caches and proxy settings are the caller's, so the generator is built once.
func goEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch {
		case strings.HasPrefix(kv, "GOFLAGS="):
			var keep []string
			for _, f := range strings.Fields(strings.TrimPrefix(kv, "GOFLAGS=")) {
				if !strings.HasPrefix(f, "-mod=") {
					keep = append(keep, f)
				}
			}
			env = append(env, "GOFLAGS="+strings.Join(keep, " "))
		case strings.HasPrefix(kv, "GOWORK="):
		default:
			env = append(env, kv)
		}
	}
	return append(env, "GOWORK=off")
}

func goRun(t *testing.T, dir string, env []string, goBin string, args ...string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Dir, cmd.Env = dir, env
	return cmd.CombinedOutput()
}

// codegenUnavailable skips the test loudly, or fails it under BERTH_CODEGEN_REQUIRED=1.
func codegenUnavailable(t *testing.T, what string, out []byte, err error) {
	t.Helper()
	msg := "*** generated-client test SKIPPED: " + what + " (no module proxy or module cache?): " +
		err.Error() + "\n" + string(out)
	if os.Getenv(EnvCodegenRequired) == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
