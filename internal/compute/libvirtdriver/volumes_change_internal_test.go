package libvirtdriver

import (
	"errors"
	"fmt"
	"testing"

	"github.com/digitalocean/go-libvirt"
)

// TestDeviceMissing: libvirt's answer to a detach of a disk the domain no longer has
// (as CI met it, the guest having let go of the volume while the request was asked
// again) reads as gone; every other answer stays an error.
func TestDeviceMissing(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{libvirt.Error{Code: 1, Message: "internal error: no device found with alias ua-volume-7001-disk"}, true},
		{fmt.Errorf("detach: %w", libvirt.Error{Code: 1, Message: "internal error: no device found with alias ua-volume-7-disk"}), true},
		{libvirt.Error{Code: 55, Message: "Requested operation is not valid: domain is not running"}, false},
		{libvirt.Error{Code: 1, Message: "internal error: unable to execute QEMU command 'device_del': Device ua-volume-7-ctl is already in the process of unplug"}, false},
		{errors.New("connection reset by peer"), false},
		{nil, false},
	} {
		if got := deviceMissing(c.err); got != c.want {
			t.Errorf("deviceMissing(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
