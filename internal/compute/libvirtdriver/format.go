package libvirtdriver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"

	"github.com/digitalocean/go-libvirt"

	"github.com/berthhq/berth/internal/compute"
)

// A volume's filesystem is made where Berth runs, never on the host: mkfs writes it
// into a sparse file of the volume's size, and only the parts of that file that hold
// something are uploaded into the (sparse, all zeros) pool volume, each at its offset.
// It works the same for a host reached over the network, through libvirt's API
// alone (docs/drivers.md, "libvirt: volumes").

// mkfsArgs is how each filesystem is made: lazily (the guest's kernel initialises
// the inode tables in the background), without discarding (the new volume reads as
// zeros already).
var mkfsArgs = map[string][]string{
	"ext4": {"mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=1,lazy_journal_init=1,nodiscard"},
	"xfs":  {"mkfs.xfs", "-q", "-f", "-K"},
}

// uploadChunk is the unit in which the image is read and runs of zeros are skipped.
const uploadChunk = 1 << 20

// makeFilesystem writes a filesystem of kind format into a sparse temporary file of
// size bytes and returns it (the caller removes it). A missing mkfs is
// compute.ErrFailed naming the package to install.
func makeFilesystem(ctx context.Context, format string, size uint64) (*os.File, error) {
	args, ok := mkfsArgs[format]
	if !ok {
		return nil, fmt.Errorf("%w: filesystem %q: ext4 or xfs", compute.ErrFailed, format)
	}
	if _, err := exec.LookPath(args[0]); err != nil {
		pkg := map[string]string{"ext4": "e2fsprogs", "xfs": "xfsprogs"}[format]
		return nil, fmt.Errorf("%w: %s is not installed where Berth runs (install %s)", compute.ErrFailed, args[0], pkg)
	}
	f, err := os.CreateTemp("", "berth-volume-*.img")
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*os.File, error) {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	if err := f.Truncate(int64(size)); err != nil {
		return fail(err)
	}
	out, err := exec.CommandContext(ctx, args[0], append(args[1:], f.Name())...).CombinedOutput()
	if err != nil {
		return fail(fmt.Errorf("%s: %v: %s", args[0], err, bytes.TrimSpace(out)))
	}
	return f, nil
}

// span is a range of a file: [Off, Off+Len).
type span struct{ Off, Len int64 }

// dataSpans lists the parts of f that hold anything but zeros: the file's data
// extents (SEEK_DATA/SEEK_HOLE), less the runs of whole zero chunks in them (a
// filesystem that allocates without writing, as tmpfs does, reports zeros as data).
func dataSpans(f *os.File) ([]span, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	var out []span
	buf := make([]byte, uploadChunk)
	for off := int64(0); off < st.Size(); {
		start, err := f.Seek(off, seekData)
		if errors.Is(err, syscall.ENXIO) {
			break // no data after off
		}
		if err != nil {
			return nil, err
		}
		end, err := f.Seek(start, seekHole)
		if err != nil {
			return nil, err
		}
		for at := start; at < end; at += uploadChunk {
			n, err := f.ReadAt(buf[:min(uploadChunk, end-at)], at)
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			if allZero(buf[:n]) {
				continue
			}
			if k := len(out) - 1; k >= 0 && out[k].Off+out[k].Len == at {
				out[k].Len += int64(n)
			} else {
				out = append(out, span{at, int64(n)})
			}
		}
		off = end
	}
	return out, nil
}

// lseek's whence values beyond io.Seek*: the next data, the next hole.
const (
	seekData = 3
	seekHole = 4
)

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// formatVolume makes a filesystem of kind format on a new pool volume of size
// bytes (which reads as zeros): mkfs into a sparse file here, then each span that
// holds something uploaded at its offset. It answers how many spans it sent.
func (d *Driver) formatVolume(ctx context.Context, l *libvirt.Libvirt, h host, vol libvirt.StorageVol, format string, size uint64) (int, error) {
	f, err := makeFilesystem(ctx, format, size)
	if err != nil {
		return 0, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	spans, err := dataSpans(f)
	if err != nil {
		return 0, err
	}
	for _, s := range spans {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		err := l.StorageVolUpload(vol, io.NewSectionReader(f, s.Off, s.Len), uint64(s.Off), uint64(s.Len), 0)
		if isCode(err, libvirt.ErrNoSupport) || isCode(err, libvirt.ErrOperationUnsupported) {
			// libvirt's rbd pools take no uploads (docs/drivers.md, "libvirt: volumes").
			return 0, fmt.Errorf("%w: pool %s cannot take a filesystem made by Berth (%v); make the volume without one", compute.ErrFailed, vol.Pool, err)
		}
		if err != nil {
			return 0, d.lv(h, "upload filesystem to "+vol.Name, err)
		}
	}
	return len(spans), nil
}
