// Package testdisk gives a test a small file system of its own that it can fill up
// and free again: a tmpfs mounted under the test's temporary directory. A full disk
// is what a hosting provider's database meets one day; tests of what Berth does then
// need a real one. Mounting needs root (CI runs as root): without it the test is
// skipped with a loud message, or fails when BERTH_DISK_REQUIRED is set.
package testdisk

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Disk is a small mounted file system.
type Disk struct {
	// Dir is its root.
	Dir    string
	filler string
}

// Mount mounts a tmpfs of size bytes for the test; it is unmounted when the test ends.
func Mount(t testing.TB, size int64) *Disk {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, fmt.Sprintf("size=%d,mode=0700", size)); err != nil {
		msg := fmt.Sprintf("testdisk: cannot mount a tmpfs (%v): this test needs root to fill a disk; it did NOT run", err)
		if os.Getenv("BERTH_DISK_REQUIRED") != "" {
			t.Fatal(msg + " (BERTH_DISK_REQUIRED is set)")
		}
		t.Skip(msg)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("testdisk: unmount %s: %v", dir, err)
		}
	})
	return &Disk{Dir: dir, filler: filepath.Join(dir, ".filler")}
}

// Fill takes every free byte of the disk (a file grows until the disk is full).
func (d *Disk) Fill(t testing.TB) {
	t.Helper()
	f, err := os.OpenFile(d.filler, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for len(buf) > 0 {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			buf = buf[:len(buf)/2] // the last blocks, in smaller writes
		}
	}
}

// Free gives back what Fill took.
func (d *Disk) Free(t testing.TB) {
	t.Helper()
	if err := os.Remove(d.filler); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
}
