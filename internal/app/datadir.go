package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/berthhq/berth/internal/store/sqlstore"
)

// Create says when Open may create a database where there is none (a missing or
// zero-byte berth.db).
type Create int

const (
	// CreateInEmptyDir (serve, the default) creates one only in a new or empty
	// directory: anything else there (berth.gen, demo-token, a WAL) says a
	// database existed, and starting an empty Berth would hide its loss.
	CreateInEmptyDir Create = iota
	// CreateNever (admin) answers an error: a mistyped --data must not make a new
	// Berth that the command then reports success in.
	CreateNever
	// CreateAlways (migrate) creates one in any directory: the operator asked.
	CreateAlways
)

// LockFile is serve's lock in the data dir; DemoTokenFile the demo account's token.
const (
	LockFile      = "berthd.lock"
	DemoTokenFile = "demo-token"
)

// privateFiles are the files of the data dir that hold secrets (password and token
// hashes, the demo token) or say what the database holds: only the owner reads them.
var privateFiles = []string{sqlstore.DBFile, sqlstore.DBFile + "-wal", sqlstore.DBFile + "-shm", sqlstore.DBFile + "-journal",
	sqlstore.GenFile, DemoTokenFile, LockFile, DNSLockFile, LicenseKeyFile}

// prepareDataDir checks that dir may be opened under create, makes the database
// file (0600) when it is to be created, and makes the private files 0600 whatever
// the umask or an older Berth left. It returns warnings for the log: files whose
// mode it tightened, a directory others can read.
func prepareDataDir(dir string, create Create) (warnings []string, err error) {
	db := filepath.Join(dir, sqlstore.DBFile)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if create == CreateNever {
			return nil, fmt.Errorf("no data directory %s: check --data, or run `berthd migrate --data %s` to create a new Berth there", dir, dir)
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("data dir: %w", err)
		}
	case err != nil:
		return nil, fmt.Errorf("data dir: %w", err)
	case !st.IsDir():
		return nil, fmt.Errorf("data dir %s is not a directory", dir)
	}
	dbst, err := os.Stat(db)
	missing := errors.Is(err, fs.ErrNotExist) || (err == nil && dbst.Size() == 0)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("database %s: %w", db, err)
	}
	if missing {
		what := "no database " + db
		if err == nil {
			what = "the database " + db + " is empty (0 bytes)"
		}
		switch create {
		case CreateNever:
			return nil, fmt.Errorf("%s: check --data, or run `berthd migrate --data %s` to create a new Berth there", what, dir)
		case CreateInEmptyDir:
			others, err := entries(dir)
			if err != nil {
				return nil, err
			}
			if len(others) > 0 {
				return nil, fmt.Errorf("%s, but %s holds %s: a Berth was there. Restore berth.db from a backup, "+
					"or run `berthd migrate --data %s` to start a new, empty one there", what, dir, strings.Join(others, ", "), dir)
			}
		}
		f, err := os.OpenFile(db, os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return nil, fmt.Errorf("create %s: %w", db, err)
		}
		f.Close()
	}
	for _, name := range privateFiles {
		p := filepath.Join(dir, name)
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return warnings, err
		}
		if st.Mode().IsRegular() && st.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(p, 0o600); err != nil {
				return warnings, fmt.Errorf("make %s private: %w", p, err)
			}
			warnings = append(warnings, fmt.Sprintf("%s was readable by others (mode %04o): made 0600", p, st.Mode().Perm()))
		}
	}
	if st, err := os.Stat(dir); err == nil && st.Mode().Perm()&0o077 != 0 {
		warnings = append(warnings, fmt.Sprintf("the data directory %s is open to others (mode %04o): chmod 700 it", dir, st.Mode().Perm()))
	}
	return warnings, nil
}

// entries lists what a directory holds, but a file system's lost+found.
func entries(dir string) ([]string, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	var out []string
	for _, de := range des {
		if de.Name() != "lost+found" {
			out = append(out, de.Name())
		}
	}
	slices.Sort(out)
	return out, nil
}
