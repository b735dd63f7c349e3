// Package testwatch names the tests that outlive go test's -timeout, at the end of
// their output. When a package's tests time out, go test prints the tests still
// running first and every goroutine's stack after them: in a CI log of which only the
// tail is kept, the names are lost and the tail is the stacks of libraries' own
// goroutines. Start, from a TestMain, arms a watchdog that fires a little before the
// timeout: it writes every goroutine's stack, then, last, each goroutine that runs a
// test of this module with its frames in this module's files (the test and where it
// waits), and exits with status 2.
package testwatch

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"
)

// Start arms the watchdog for the test binary's -test.timeout (none: nothing is
// armed). Call it from TestMain before m.Run.
func Start() {
	f := flag.Lookup("test.timeout")
	if f == nil {
		return
	}
	if !flag.Parsed() {
		flag.Parse()
	}
	timeout, err := time.ParseDuration(f.Value.String())
	if err != nil || timeout <= 0 {
		return
	}
	time.AfterFunc(early(timeout), func() {
		report(os.Stderr, timeout)
		os.Exit(2)
	})
}

// early is when the watchdog fires: 2 minutes before the timeout, or a tenth of it
// when that is less.
func early(timeout time.Duration) time.Duration {
	margin := min(2*time.Minute, timeout/10)
	return timeout - margin
}

// report writes every goroutine's stack, then the summary.
func report(w io.Writer, timeout time.Duration) {
	var stacks bytes.Buffer
	pprof.Lookup("goroutine").WriteTo(&stacks, 2)
	fmt.Fprintf(w, "\ntestwatch: the tests are about to reach go test's -timeout %s; every goroutine:\n\n", timeout)
	w.Write(stacks.Bytes())
	fmt.Fprintf(w, "\ntestwatch: the tests still running near -timeout %s, and where each waits (frames in %s):\n", timeout, moduleRoot)
	summarize(w, stacks.String(), moduleRoot)
}

// moduleRoot is this module's directory, as the stacks name its files.
var moduleRoot = func() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return ""
	}
	return filepath.Dir(filepath.Dir(filepath.Dir(file))) + string(filepath.Separator)
}()

// summarize writes, for each goroutine of stacks (pprof's goroutine profile at debug
// 2) that runs a _test.go file under root (TestMain's waiting for the tests aside),
// its header and its frames under root.
func summarize(w io.Writer, stacks, root string) {
	const maxFrames = 16
	found := 0
	for _, g := range strings.Split(stacks, "\n\n") {
		sc := bufio.NewScanner(strings.NewReader(g))
		sc.Buffer(nil, 1<<20)
		var header, fn string
		var frames []string
		test := false
		for sc.Scan() {
			line := sc.Text()
			switch {
			case header == "":
				header = line
			case strings.HasPrefix(line, "\t"):
				file := strings.TrimSpace(line)
				if i := strings.LastIndex(file, " +0x"); i >= 0 {
					file = file[:i]
				}
				if root == "" || !strings.HasPrefix(file, root) {
					continue
				}
				if strings.Contains(file, "_test.go:") && !strings.Contains(fn, ".TestMain(") {
					test = true
				}
				if len(frames) < maxFrames {
					frames = append(frames, fmt.Sprintf("    %s\n        %s", fn, strings.TrimPrefix(file, root)))
				}
			default:
				fn = line
			}
		}
		if !test || !strings.HasPrefix(header, "goroutine ") {
			continue
		}
		found++
		fmt.Fprintf(w, "\n  %s\n%s\n", header, strings.Join(frames, "\n"))
	}
	if found == 0 {
		fmt.Fprintln(w, "  (no goroutine runs a test of this module's)")
	}
}
