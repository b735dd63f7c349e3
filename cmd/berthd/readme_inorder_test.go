package main

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/testlog"
	"github.com/berthhq/berth/internal/testnet"
)

// readmeSection is the README's section under the heading that starts with heading
// (up to the next "## "), and the text of its blocks of lang (```lang), in order.
func readmeSection(t *testing.T, readme, heading, lang string) []string {
	t.Helper()
	i := strings.Index(readme, "\n"+heading)
	if i < 0 {
		t.Fatalf("README.md has no section %q", heading)
	}
	section := readme[i+1:]
	if j := strings.Index(section[len(heading):], "\n## "); j >= 0 {
		section = section[:len(heading)+j]
	}
	var blocks []string
	for rest := section; ; {
		k := strings.Index(rest, "```"+lang+"\n")
		if k < 0 {
			break
		}
		rest = rest[k+len("```"+lang+"\n"):]
		k = strings.Index(rest, "```")
		if k < 0 {
			t.Fatalf("an unterminated %s block in %q", lang, heading)
		}
		blocks = append(blocks, rest[:k])
		rest = rest[k+3:]
	}
	if len(blocks) == 0 {
		t.Fatalf("no %s block in %q", lang, heading)
	}
	return blocks
}

// TestREADMEInOrder follows the README as a new user does, top to bottom, in one
// directory that stands for a fresh clone (testenv.Checkout), against one berthd
// serve --demo --sandbox --dns-addr started there: the walk-through with curl, then
// the one with berth (which builds berth with make build and puts it on PATH itself:
// nothing else puts it there), then the Terraform one (the provider built as it
// says, OpenTofu from scripts/tofu.sh, the README's configuration as main.tf). Each
// section's shell blocks run as one script (bash -e: the first failing command, a
// dig line whose answer is not the one it greps for, fails the test), and each must
// work after the ones before it, whatever they left in the account. These stand in
// for what a user types: the addresses (the test's, the dig lines' too), the
// Terraform directory (a temporary one, not /tmp/berth-tf), -auto-approve for the
// "yes" tofu asks for, -detailed-exitcode on the plan the README says has no
// changes, a fake ssh (the simulated server has no machine at its address).
func TestREADMEInOrder(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Berth and runs the README against it")
	}
	for _, tool := range []string{"bash", "curl", "jq", "od", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("*** SKIPPED: the README's walk-throughs need %s on PATH (Debian: apt-get install curl jq make) ***", tool)
		}
	}
	testenv.Dig(t)
	if os.Getenv("TF_ACC_TERRAFORM_PATH") == "" {
		msg := "*** SKIPPED: the README's Terraform walk-through needs OpenTofu: TF_ACC_TERRAFORM_PATH=$(scripts/tofu.sh) (scripts/test.sh sets it) ***"
		if os.Getenv("BERTH_TOFU_REQUIRED") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	t.Parallel()
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	const readmeBase = "http://127.0.0.1:8080/"
	curl := readmeShell(t, curlWalkStart, curlWalkEnd)
	cli := strings.Join(readmeSection(t, readme, "## Walk-through with `berth`", "sh"), "\n")
	tf := strings.Join(readmeSection(t, readme, "## Terraform and OpenTofu", "sh"), "\n")
	config := readmeSection(t, readme, "## Terraform and OpenTofu", "hcl")[0]
	for _, s := range []string{curl, cli, tf} {
		if !strings.Contains(s, readmeBase) {
			t.Fatalf("a walk-through no longer names %s: update this test\n%s", readmeBase, s)
		}
	}
	for _, want := range []string{"mkdir -p /tmp/berth-tf && cd /tmp/berth-tf ", "$TOFU apply ", "$TOFU plan ", "$TOFU destroy\n"} {
		if strings.Count(tf, want) != 1 {
			t.Fatalf("the Terraform walk-through no longer has %q once: update this test\n%s", want, tf)
		}
	}

	work, home, tools, tfDir := testenv.Checkout(t), t.TempDir(), t.TempDir(), t.TempDir()
	addr, dnsAddr := testnet.FreeAddr(t), testnet.FreeDNSAddr(t)
	curl, cli, tf = slowShutdown(t, digAt(t, curl, dnsAddr, 3)), digAt(t, cli, dnsAddr, 2), digAt(t, tf, dnsAddr, 2)
	d := &daemon{base: "http://" + addr + "/v1", log: &testlog.Buffer{}}
	d.cmd = exec.Command(testenv.BerthdBinary(t), "serve", "--demo", "--sandbox", "--addr", addr, "--sim-time-scale", "0.2",
		"--dns-addr", dnsAddr)
	d.cmd.Dir = work // data/ there, as go run ./cmd/berthd serve makes it
	d.cmd.Stdout, d.cmd.Stderr = d.log, d.log
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.cmd.Process.Kill(); _ = d.cmd.Wait() })
	d.waitUp(t)

	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519.pub"), []byte(testenv.PublicKey(t)+" readme@berth"+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tools, "ssh"), []byte("#!/bin/sh\necho \"ssh $*\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// "save the configuration above here as main.tf"
	if err := os.WriteFile(filepath.Join(tfDir, "main.tf"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append([]string{"HOME=" + home, "PATH=" + tools + ":" + os.Getenv("PATH"), "LANG=C"}, testenv.GoEnv(t)...)
	if v := os.Getenv("BERTH_TOOLS_CACHE"); v != "" {
		env = append(env, "BERTH_TOOLS_CACHE="+v)
	}
	tf = strings.NewReplacer("/tmp/berth-tf", tfDir, "$TOFU apply ", "$TOFU apply -auto-approve ",
		"$TOFU plan ", "$TOFU plan -detailed-exitcode ", "$TOFU destroy\n", "$TOFU destroy -auto-approve\n").Replace(tf)
	for _, step := range []struct{ name, script string }{
		{"the walk-through with curl", curl},
		{"the walk-through with berth", cli},
		{"the Terraform walk-through", tf},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-x", "-c", strings.ReplaceAll(step.script, readmeBase, strings.TrimSuffix(d.base, "v1")))
		cmd.Dir, cmd.Env, cmd.WaitDelay = work, env, 10*time.Second
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("%s, after the ones before it, failed: %v\n%s\nberthd:\n%s", step.name, err, out, d.log)
		}
	}
	token, err := os.ReadFile(filepath.Join(work, "data", "demo-token"))
	if err != nil {
		t.Fatal(err)
	}
	// The walk-throughs spent the demo token's request budget: a 429 here is the rate
	// limit doing its work (it names a retry within seconds), not a finding.
	for _, path := range []string{"/servers", "/volumes", "/domains"} {
		code, m := d.call(t, strings.TrimSpace(string(token)), "GET", path, nil)
		for deadline := time.Now().Add(time.Minute); code == http.StatusTooManyRequests && time.Now().Before(deadline); {
			time.Sleep(time.Second)
			code, m = d.call(t, strings.TrimSpace(string(token)), "GET", path, nil)
		}
		if data, _ := m["data"].([]any); code != 200 || len(data) != 0 {
			t.Errorf("GET %s after the README: %d %v", path, code, m)
		}
	}
}
