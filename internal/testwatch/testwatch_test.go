package testwatch

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	Start()
	os.Exit(m.Run())
}

// TestHangs is the test the watchdog finds: it waits, in a function of its own,
// until the watchdog ends the process (only when TestWatchdog runs it).
func TestHangs(t *testing.T) {
	if os.Getenv("BERTH_TESTWATCH_HANG") != "1" {
		t.Skip("run by TestWatchdog")
	}
	waitForever()
}

func waitForever() { select {} }

// TestWatchdog: a test binary whose test outlives -timeout ends before go test's own
// panic, with the test and the frame where it waits in the last lines it writes.
func TestWatchdog(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run", "^TestHangs$", "-test.timeout", "5s")
	cmd.Env = append(os.Environ(), "BERTH_TESTWATCH_HANG=1")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("exit: %v, want status 2; output:\n%s", err, out)
	}
	if took := time.Since(start); took >= 5*time.Second {
		t.Errorf("the watchdog fired after %s, not before the -timeout of 5s", took)
	}
	text := string(out)
	if strings.Contains(text, "panic: test timed out") {
		t.Errorf("go test's own timeout fired first:\n%s", text)
	}
	i := strings.LastIndex(text, "testwatch: the tests still running")
	if i < 0 {
		t.Fatalf("no summary:\n%s", text)
	}
	tail := text[i:]
	for _, want := range []string{"testwatch.TestHangs", "testwatch.waitForever", "internal/testwatch/testwatch_test.go:"} {
		if !strings.Contains(tail, want) {
			t.Errorf("the summary lacks %q:\n%s", want, tail)
		}
	}
	// Goroutines of no test of the module's (the watchdog's own timer, the testing
	// package's) are in the full dump only.
	if strings.Contains(tail, "TestMain") {
		t.Errorf("the summary holds TestMain, which only waits for the tests:\n%s", tail)
	}
	if strings.Contains(tail, "testing.tRunner") || strings.Contains(tail, "/src/testing/") {
		t.Errorf("the summary holds frames outside the module:\n%s", tail)
	}
}

func TestEarly(t *testing.T) {
	for _, c := range []struct{ timeout, want time.Duration }{
		{60 * time.Minute, 58 * time.Minute},
		{10 * time.Minute, 9 * time.Minute},
		{5 * time.Second, 4500 * time.Millisecond},
	} {
		if got := early(c.timeout); got != c.want {
			t.Errorf("early(%s) = %s, want %s", c.timeout, got, c.want)
		}
	}
}
