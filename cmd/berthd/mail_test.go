package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/testenv"
)

// TestServeMailFlags: --smtp-url (or BERTH_SMTP_URL), --mail-from and --support-email
// are checked before anything starts (exit 1, the error names the flag), and the SMTP
// password is in neither the error nor anything else berthd writes.
func TestServeMailFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"--smtp-url", "http://berth:s3cret@mail.example.com"}, "", "--smtp-url http://REDACTED@mail.example.com: scheme"},
		{[]string{"--smtp-url", "smtp://berth:s3cret@mail.example.com:99999"}, "", "--smtp-url smtp://REDACTED@mail.example.com:99999: port"},
		{[]string{"--smtp-url", "smtp://berth:s3c ret%zz@mail.example.com"}, "", "--smtp-url smtp://REDACTED@mail.example.com: not a URL"},
		{nil, "smtp://berth:s3cret@mail.example.com/x", "--smtp-url smtp://REDACTED@mail.example.com/x"},
		{[]string{"--mail-from", "berth at example.com"}, "", `--mail-from "berth at example.com"`},
		{[]string{"--support-email", "a@example.com, b@example.com"}, "", "--support-email"},
	} {
		cmd := exec.Command(bin, append([]string{"serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0"}, tc.args...)...)
		cmd.Env = append(os.Environ(), "BERTH_SMTP_URL="+tc.env)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output() // stdout: one JSON object with the error
		var res struct{ Error string }
		_ = json.Unmarshal(out, &res)
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.HasPrefix(res.Error, tc.want) {
			t.Errorf("serve %v (BERTH_SMTP_URL %q): %v, %s; want exit 1 with an error starting %s", tc.args, tc.env, err, out, tc.want)
		}
		if all := string(out) + stderr.String(); strings.Contains(all, "s3c") {
			t.Errorf("serve %v: the password is in its output: %s", tc.args, all)
		}
	}
}
