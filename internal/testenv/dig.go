package testenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// EnvDigRequired, set to 1 (CI sets it: .ci/run installs bind9-dnsutils), makes a
// test that needs dig fail instead of skipping without it.
const EnvDigRequired = "BERTH_DIG_REQUIRED"

// Dig is the path of dig, which the README's DNS steps run (Debian:
// bind9-dnsutils). Without it the test is skipped with a loud message, or fails
// under BERTH_DIG_REQUIRED=1.
func Dig(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("dig")
	if err != nil {
		const why = "this test asks Berth's nameserver with dig, which is not on PATH (Debian: apt-get install bind9-dnsutils)"
		if os.Getenv(EnvDigRequired) == "1" {
			t.Fatal(why + ", and " + EnvDigRequired + "=1 requires it")
		}
		t.Skip("*** SKIPPED: " + why + "; it did NOT run ***")
	}
	return path
}

// Dig asks the Berth's nameserver (Options.DNS) with dig, +short: the answer's
// values, one a line, as the README's dig lines print them. A test calls the
// function Dig first, which skips it without dig.
func (e *Env) Dig(args ...string) (string, error) {
	if e.DNSAddr == "" {
		return "", errors.New("testenv: Dig on a Berth that answers no DNS (Options.DNS)")
	}
	host, port, err := net.SplitHostPort(e.DNSAddr)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "dig", append([]string{"@" + host, "-p", port, "+short"}, args...)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("dig %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out)), nil
}
