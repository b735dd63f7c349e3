// Package berthdbin gives the benchmark programs under bench/ a berthd binary to run
// and its operator commands: the parts every benchmark that starts a berthd shares.
package berthdbin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Resolve returns the berthd binary to run: given, when it is not empty; otherwise
// ./cmd/berthd built from the repository at root into dir (root "" means the
// repository the working directory is in). It fails when the build does, or when no
// repository is found.
func Resolve(ctx context.Context, given, root, dir string) (string, error) {
	if given != "" {
		return given, nil
	}
	if root == "" {
		var err error
		if root, err = findRoot(); err != nil {
			return "", err
		}
	}
	bin := filepath.Join(dir, "berthd")
	fmt.Fprintf(os.Stderr, "== building berthd into %s\n", bin)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/berthd")
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/berthd: %w", err)
	}
	return bin, nil
}

// Admin runs `bin --data data admin args...` and decodes the one JSON object it
// prints into out. A failing command's error carries what it printed.
func Admin(ctx context.Context, bin, data string, out any, args ...string) error {
	cmd := exec.CommandContext(ctx, bin, append([]string{"--data", data, "admin"}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("berthd admin %s: %w: %s%s", strings.Join(args[:min(2, len(args))], " "), err, b, stderr.String())
	}
	return json.Unmarshal(b, out)
}

// Migrate runs `bin --data data migrate`: it creates the database of a new data
// directory, which admin commands never do.
func Migrate(ctx context.Context, bin, data string) error {
	out, err := exec.CommandContext(ctx, bin, "--data", data, "migrate").CombinedOutput()
	if err != nil {
		return fmt.Errorf("berthd migrate: %w: %s", err, out)
	}
	return nil
}

// findRoot walks up from the working directory to the module's go.mod.
func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(b), "module github.com/berthhq/berth\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the berth repository: give -root or -berthd")
		}
		dir = parent
	}
}
