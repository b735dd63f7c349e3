package libvirtdriver

// The automount hook Berth's first-boot configuration installs on every machine
// (docs/drivers.md, "libvirt: volumes"): a udev rule that runs a script for each disk
// of vendor BERTH, model Volume as it comes (at boot, on a hot-plug) and goes. The
// script mounts a volume attached with automount, which the host marks by putting its
// disk at SCSI target 1 (target 0 otherwise): a bit of the disk's address, so that
// nothing of the volume's data carries it. The seed also asks udev to run the rule
// for the disks there at the first boot (runcmd), which came before the rule.

// volumeRulePath and volumeHookPath are where the seed writes them.
const (
	volumeRulePath = "/etc/udev/rules.d/90-berth-volumes.rules"
	volumeHookPath = "/usr/local/sbin/berth-volume"
)

const volumeRule = `# Berth volumes: a disk of vendor BERTH, model Volume, serial the volume's id.
# berth-volume mounts one attached with automount at /mnt/volume-<id>.
ACTION=="add", SUBSYSTEM=="block", ENV{DEVTYPE}=="disk", ENV{ID_VENDOR}=="BERTH", ENV{ID_MODEL}=="Volume", RUN+="` + volumeHookPath + ` add %k $env{ID_SERIAL_SHORT}"
ACTION=="remove", SUBSYSTEM=="block", ENV{DEVTYPE}=="disk", ENV{ID_VENDOR}=="BERTH", ENV{ID_MODEL}=="Volume", RUN+="` + volumeHookPath + ` remove %k $env{ID_SERIAL_SHORT}"
`

const volumeHook = `#!/bin/sh
# Berth's volume hook, run by udev (` + volumeRulePath + `) for a disk of
# vendor BERTH, model Volume as it is added (at boot, on a hot-plug) and removed:
#   berth-volume add|remove KERNEL-NAME VOLUME-ID
# A volume attached with automount is a disk at SCSI target 1 (H:C:1:L): it is
# mounted at /mnt/volume-<id> when it holds a filesystem. Its filesystem is never
# made or changed here.
action=$1 name=$2 id=$3
case $id in '' | *[!0-9]*) exit 0 ;; esac
mnt=/mnt/volume-$id
dev=/dev/disk/by-id/scsi-0BERTH_Volume_$id
systemd=
[ -d /run/systemd/system ] && command -v systemd-mount >/dev/null 2>&1 && systemd=1
mounted() { grep -q " $mnt " /proc/mounts; }
if [ "$action" = remove ]; then
	# systemd unmounts a mount whose device is gone by itself.
	[ -z "$systemd" ] && mounted && umount -l "$mnt"
	exit 0
fi
hctl=$(basename "$(readlink -f "/sys/class/block/$name/device")")
[ "$(echo "$hctl" | cut -d: -f3)" = 1 ] || exit 0
mounted && exit 0
[ -e "$dev" ] || dev=/dev/$name
mkdir -p "$mnt"
if [ -n "$systemd" ]; then
	# udev runs this in a mount namespace of its own: systemd mounts it for all.
	exec systemd-mount --no-block --collect "$dev" "$mnt"
fi
mount "$dev" "$mnt" 2>/dev/null || rmdir "$mnt" 2>/dev/null
exit 0
`

// volumeTrigger is the first-boot command that has udev run its rules (the volumes'
// among them) for the disks present before they were written.
var volumeTrigger = []string{"udevadm", "trigger", "--action=add", "--subsystem-match=block"}
