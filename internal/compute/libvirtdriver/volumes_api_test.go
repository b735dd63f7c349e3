package libvirtdriver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/catalog"
	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/compute/libvirtdriver"
	"github.com/berthhq/berth/internal/compute/libvirtdriver/libvirttest"
	"github.com/berthhq/berth/internal/testenv"
)

// TestVolumesThroughTheAPI: volumes through the HTTP API on a real guest (issue 29).
// A volume created for a running server with ext4 and automount is mounted in its
// guest at /mnt/volume-<id> from the volume's linux_device; a detach the guest does
// not acknowledge (it ignores hot-plug requests while it holds the mounted volume)
// ends the operation in error after the API's 60 s, the volume still attached to the
// server and readable in the guest; once the guest lets go, a detach succeeds, and a
// deletion leaves nothing in the pool (virsh vol-list).
func TestVolumesThroughTheAPI(t *testing.T) {
	t.Parallel()
	e := libvirttest.Require(t)
	ctx := context.Background()
	prefix := e.Prefix + "vapi-"
	env := testenv.New(t, testenv.Options{Driver: "libvirt", RateLimit: 1_000_000,
		Libvirt: libvirtdriver.Options{Prefix: prefix, Poll: 100 * time.Millisecond}})
	c, err := catalog.Parse([]byte(strings.Replace(testCatalog, `snapshot_price_gb_hour: "0.0001"`,
		`snapshot_price_gb_hour: "0.0001"`+"\n    volume_price_gb_hour: \"0.0001\"\n    volume_price_gb_month: \"0.0440\"", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := env.App.Service.ApplyCatalog(ctx, c); err != nil {
		t.Fatal(err)
	}
	d := env.App.LibvirtDriver()
	libvirttest.Setup(t, e, d, "10.77.0.14", "10.77.0.15")
	if _, err := d.SetVolumePool(ctx, 1, e.Pool); err != nil {
		t.Fatal(err)
	}
	acct := env.NewAccount("en", "100.00", "")
	start := time.Now()
	srv := acct.Do("POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1}).Want(t, 201).Map(t)["data"].(map[string]any)
	name := srv["name"].(string)
	pace := libvirttest.RunPace()
	acct.WaitStatusEvery(t, name, "running", libvirttest.FirstBoot, guestPoll)
	libvirttest.NewConsole(t, prefix+name).WaitBoot(pace, start, 1)
	slack := pace.Boots(1)
	s := openShell(t, d, name, slack)

	vol := acct.Do("POST", "/volumes", map[string]any{"name": "data", "size_gb": 10, "format": "ext4", "server_id": srv["id"], "automount": true}).
		Want(t, 201).Map(t)["data"].(map[string]any)
	id := int64(vol["id"].(float64))
	path := fmt.Sprintf("/volumes/%d", id)
	if op := volumeOperation(t, acct, vol, slack); op["status"] != "success" {
		t.Fatalf("creating volume %d for %s: %v", id, name, op)
	}
	vol = acct.Do("GET", path, nil).Want(t, 200).Map(t)["data"].(map[string]any)
	if vol["linux_device"] != compute.VolumeDevice(id) || vol["server_id"] != srv["id"] {
		t.Fatalf("volume after its creation: %v", vol)
	}
	spec := compute.VolumeSpec{ID: id, Format: "ext4"}
	mounted(t, s, spec, slack)
	mnt := compute.VolumeMountPoint(id)
	s.run(fmt.Sprintf("echo kept > %s/note && sync", mnt))

	s.run("echo mask > /sys/firmware/acpi/interrupts/gpe01")
	detached := acct.Do("POST", path+"/detach", nil).Want(t, 200).Map(t)["data"].(map[string]any)
	if op := volumeOperation(t, acct, detached, compute.VolumeDetachTimeout+slack); op["status"] != "error" {
		t.Fatalf("detaching a volume the guest keeps: %v; want the operation in error", op)
	}
	if vol = acct.Do("GET", path, nil).Want(t, 200).Map(t)["data"].(map[string]any); vol["server_id"] != srv["id"] {
		t.Errorf("after the refused detach: %v; want it still attached to server %v", vol, srv["id"])
	}
	if got := s.run("cat " + mnt + "/note"); got != "kept" {
		t.Errorf("after the refused detach the guest reads %q", got)
	}

	s.run("umount " + mnt + "; echo unmask > /sys/firmware/acpi/interrupts/gpe01")
	detached = acct.Do("POST", path+"/detach", nil).Want(t, 200).Map(t)["data"].(map[string]any)
	if op := volumeOperation(t, acct, detached, compute.VolumeDetachTimeout+slack); op["status"] != "success" {
		t.Fatalf("detaching once the guest let go: %v", op)
	}
	acct.Do("DELETE", path, nil).Want(t, 204)
	for deadline := time.Now().Add(slack); len(virshNames(t, e.URI, prefix+"volume-", "vol-list", e.Pool)) > 0; time.Sleep(time.Second) {
		if time.Now().After(deadline) {
			t.Fatalf("virsh vol-list %s still has %q after the deletion", e.Pool, virshNames(t, e.URI, prefix+"volume-", "vol-list", e.Pool))
		}
	}
}

// volumeOperation waits up to timeout for the operation of a volume's answer to end,
// and returns it.
func volumeOperation(t *testing.T, acct *testenv.Account, vol map[string]any, timeout time.Duration) map[string]any {
	t.Helper()
	op := vol["operation"].(map[string]any)
	for deadline := time.Now().Add(timeout); ; time.Sleep(250 * time.Millisecond) {
		got := acct.Do("GET", fmt.Sprintf("/operations/%v", op["id"]), nil).Want(t, 200).Map(t)["data"].(map[string]any)
		if got["status"] != "running" {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("operation %v still running after %v: %v", op["id"], timeout, got)
		}
	}
}
