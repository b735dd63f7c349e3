package simdriver

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/berthhq/berth/internal/compute"
)

// GuestDisk is a volume as the simulated guest of a running machine sees it: a SCSI
// disk of vendor BERTH, model Volume and serial the volume's id, as compute.Volumes
// promises, and where the guest mounted it.
type GuestDisk struct {
	// Volume is the volume's name.
	Volume string
	// Name is the kernel's name of the disk: sda for LUN 0, sdb for LUN 1, ...
	Name                  string
	LUN                   int
	Vendor, Model, Serial string
	SizeBytes             int64
	// MountPoint and FSType are where the guest mounted the disk's filesystem and
	// which it is; "" when it did not (attached without automount, or no filesystem).
	// The guest mounts what automount asks at once when the disk appears, at a boot
	// or on the hot-plug, as the hook of Berth's first-boot configuration does.
	MountPoint, FSType string

	id int64 // the volume's id
}

// GuestDisks lists the volumes the simulated guest of a running machine sees, in
// the order of their LUNs: those attached to it whose attaching has ended.
// compute.ErrNotFound when the machine does not exist, compute.ErrNotRunning when it
// is not running (a stopped guest sees nothing).
func (d *Driver) GuestDisks(ctx context.Context, machine string) ([]GuestDisk, error) {
	m, _, err := d.machine(ctx, machine)
	if err != nil {
		return nil, err
	}
	if m.State != compute.StateRunning {
		return nil, compute.ErrNotRunning
	}
	return d.guestDisks(ctx, machine)
}

// guestDisks lists the disks of machine's guest, whatever its state.
func (d *Driver) guestDisks(ctx context.Context, machine string) ([]GuestDisk, error) {
	rows, err := d.db.QueryContext(ctx, d.rebind(`SELECT name, serial, size_gb, format, lun, automount FROM sim_volumes
		WHERE machine = ? AND attached_at <= ? ORDER BY lun`), machine, d.now().UnixMilli())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var disks []GuestDisk
	for rows.Next() {
		var g GuestDisk
		var sizeGB int64
		var format string
		var automount int
		if err := rows.Scan(&g.Volume, &g.id, &sizeGB, &format, &g.LUN, &automount); err != nil {
			return nil, err
		}
		g.Name, g.Vendor, g.Model, g.Serial, g.SizeBytes = diskName(g.LUN), "BERTH", "Volume", strconv.FormatInt(g.id, 10), sizeGB<<30
		if automount != 0 && format != "" {
			g.MountPoint, g.FSType = compute.VolumeMountPoint(g.id), format
		}
		disks = append(disks, g)
	}
	return disks, rows.Err()
}

// diskName is the kernel's name of the SCSI disk at lun: sda, ..., sdz, sdaa, ...
func diskName(lun int) string {
	name := ""
	for n := lun + 1; n > 0; n = (n - 1) / 26 {
		name = string(rune('a'+(n-1)%26)) + name
	}
	return "sd" + name
}

// The kernel's lines for a disk's changes, as a guest's serial console prints them;
// stamp is the time since the boot, "[   12.345678]".

func pluggedLines(stamp string, g GuestDisk) string {
	blocks := g.SizeBytes / 512
	s := fmt.Sprintf("%s scsi 0:0:0:%d: Direct-Access     %-8s %-16s 2.5+ PQ: 0 ANSI: 5\r\n", stamp, g.LUN, g.Vendor, g.Model) +
		fmt.Sprintf("%s sd 0:0:0:%d: [%s] %d 512-byte logical blocks: (%s)\r\n", stamp, g.LUN, g.Name, blocks, sizes(g.SizeBytes)) +
		fmt.Sprintf("%s sd 0:0:0:%d: [%s] Attached SCSI disk\r\n", stamp, g.LUN, g.Name)
	if g.MountPoint != "" {
		s += fmt.Sprintf("%s mounted %s on %s type %s\r\n", stamp, compute.VolumeDevice(g.id), g.MountPoint, g.FSType)
	}
	return s
}

func removedLines(stamp string, g GuestDisk) string {
	s := ""
	if g.MountPoint != "" {
		s = fmt.Sprintf("%s unmounted %s\r\n", stamp, g.MountPoint)
	}
	return s + fmt.Sprintf("%s sd 0:0:0:%d: [%s] Synchronizing SCSI cache\r\n", stamp, g.LUN, g.Name)
}

func resizedLines(stamp string, was, now GuestDisk) string {
	return fmt.Sprintf("%s sd 0:0:0:%d: [%s] %d 512-byte logical blocks: (%s)\r\n", stamp, now.LUN, now.Name, now.SizeBytes/512, sizes(now.SizeBytes)) +
		fmt.Sprintf("%s %s: detected capacity change from %d to %d\r\n", stamp, now.Name, was.SizeBytes/512, now.SizeBytes/512)
}

// diskChanges is what the kernel prints when a guest's disks go from was to now.
func diskChanges(stamp string, was, now []GuestDisk) string {
	var b strings.Builder
	for _, w := range was {
		if i := slices.IndexFunc(now, func(g GuestDisk) bool { return g.Volume == w.Volume && g.LUN == w.LUN }); i < 0 {
			b.WriteString(removedLines(stamp, w))
		}
	}
	for _, g := range now {
		i := slices.IndexFunc(was, func(w GuestDisk) bool { return g.Volume == w.Volume && g.LUN == w.LUN })
		switch {
		case i < 0:
			b.WriteString(pluggedLines(stamp, g))
		case was[i].SizeBytes != g.SizeBytes:
			b.WriteString(resizedLines(stamp, was[i], g))
		}
	}
	return b.String()
}

// sizes is a disk's size as the kernel prints it: "10.7 GB/10.0 GiB".
func sizes(bytes int64) string {
	return fmt.Sprintf("%.1f GB/%.1f GiB", float64(bytes)/1e9, float64(bytes)/(1<<30))
}
