package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPrepareDataDir: where Open may create a database (issue 12, item 8): serve only
// in a new or empty directory, admin never, migrate always; a zero-byte berth.db is
// no database.
func TestPrepareDataDir(t *testing.T) {
	t.Parallel()
	const (
		ok     = ""
		refuse = "refuse"
	)
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string) string // returns the data dir to open
		want  map[Create]string
	}{
		{"new directory", func(t *testing.T, dir string) string { return filepath.Join(dir, "new", "data") },
			map[Create]string{CreateInEmptyDir: ok, CreateNever: refuse, CreateAlways: ok}},
		{"empty directory", func(t *testing.T, dir string) string { return dir },
			map[Create]string{CreateInEmptyDir: ok, CreateNever: refuse, CreateAlways: ok}},
		{"only lost+found", func(t *testing.T, dir string) string { mkdir(t, dir, "lost+found"); return dir },
			map[Create]string{CreateInEmptyDir: ok, CreateNever: refuse, CreateAlways: ok}},
		{"berth.gen and demo-token, no berth.db", func(t *testing.T, dir string) string {
			write(t, dir, "berth.gen", "x")
			write(t, dir, "demo-token", "berth_x")
			return dir
		}, map[Create]string{CreateInEmptyDir: refuse, CreateNever: refuse, CreateAlways: ok}},
		{"zero-byte berth.db", func(t *testing.T, dir string) string { write(t, dir, "berth.db", ""); return dir },
			map[Create]string{CreateInEmptyDir: refuse, CreateNever: refuse, CreateAlways: ok}},
		{"zero-byte berth.db and a WAL", func(t *testing.T, dir string) string {
			write(t, dir, "berth.db", "")
			write(t, dir, "berth.db-wal", "frames")
			return dir
		}, map[Create]string{CreateInEmptyDir: refuse, CreateNever: refuse, CreateAlways: ok}},
		{"a database", func(t *testing.T, dir string) string { write(t, dir, "berth.db", "SQLite format 3\x00"); return dir },
			map[Create]string{CreateInEmptyDir: ok, CreateNever: ok, CreateAlways: ok}},
		{"a file, not a directory", func(t *testing.T, dir string) string { write(t, dir, "f", "x"); return filepath.Join(dir, "f") },
			map[Create]string{CreateInEmptyDir: refuse, CreateNever: refuse, CreateAlways: refuse}},
	} {
		for create, want := range tc.want {
			t.Run(tc.name, func(t *testing.T) {
				dir := tc.setup(t, t.TempDir())
				_, err := prepareDataDir(dir, create)
				switch {
				case want == ok && err != nil:
					t.Fatalf("mode %d: %v", create, err)
				case want == refuse && err == nil:
					t.Fatalf("mode %d: opened", create)
				case want == refuse && !strings.Contains(err.Error(), dir):
					t.Errorf("mode %d: %q does not name %s", create, err, dir)
				}
				db := filepath.Join(dir, "berth.db")
				st, statErr := os.Stat(db)
				if want == refuse {
					if create == CreateNever && statErr == nil && st.Size() == 0 && tc.name != "zero-byte berth.db" &&
						tc.name != "zero-byte berth.db and a WAL" {
						t.Errorf("mode %d: refused, but made %s", create, db)
					}
					if _, err := os.Stat(filepath.Join(dir)); create == CreateNever && strings.HasPrefix(tc.name, "new") && err == nil {
						t.Errorf("admin made the data directory %s", dir)
					}
					return
				}
				if statErr != nil || st.Mode().Perm() != 0o600 {
					t.Errorf("mode %d: %s: %v %v, want a 0600 file", create, db, statErr, st)
				}
			})
		}
	}
}

// TestPrivateFiles: the files holding secrets are made 0600 whatever an older Berth
// or the umask left (issue 12, item 10), and a directory others can read is warned
// about.
func TestPrivateFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	names := []string{"berth.db", "berth.db-wal", "berth.db-shm", "berth.gen", "demo-token", "berthd.lock"}
	for _, n := range names {
		write(t, dir, n, "x")
		if err := os.Chmod(filepath.Join(dir, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(t, dir, "notes.txt", "mine")
	if err := os.Chmod(filepath.Join(dir, "notes.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	warnings, err := prepareDataDir(dir, CreateInEmptyDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if st, err := os.Stat(filepath.Join(dir, n)); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v, want 0600", n, st.Mode(), err)
		}
	}
	if st, _ := os.Stat(filepath.Join(dir, "notes.txt")); st.Mode().Perm() != 0o644 {
		t.Errorf("a file not Berth's was changed: %v", st.Mode())
	}
	all := strings.Join(warnings, "\n")
	if len(warnings) != len(names)+1 || !strings.Contains(all, "0755") || !strings.Contains(all, "chmod 700") {
		t.Errorf("warnings:\n%s", all)
	}
	// Once private, nothing more to say but the directory.
	if warnings, _ := prepareDataDir(dir, CreateInEmptyDir); len(warnings) != 1 {
		t.Errorf("second start warns %v", warnings)
	}
}

func mkdir(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.Mkdir(filepath.Join(dir, name), 0o700); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
