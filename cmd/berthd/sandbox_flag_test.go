package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// TestServeSandboxRefusesLibvirt: --sandbox works with the sim driver only; with
// --driver libvirt serve refuses to start (exit 1) naming both flags, before it
// opens anything.
func TestServeSandboxRefusesLibvirt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := buildBerthd(t)
	for _, args := range [][]string{
		{"--driver", "libvirt", "--sandbox"},
		{"--sandbox", "--driver", "libvirt"},
	} {
		cmd := exec.Command(bin, append([]string{"serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0"}, args...)...)
		out, err := cmd.Output()
		var res struct{ Error string }
		_ = json.Unmarshal(out, &res)
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 1 || !strings.Contains(res.Error, "--sandbox") || !strings.Contains(res.Error, "--driver libvirt") {
			t.Errorf("serve %v: %v, %s; want exit 1 with an error naming --sandbox and --driver libvirt", args, err, out)
		}
	}
}
