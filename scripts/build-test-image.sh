#!/usr/bin/env bash
# Builds Berth's tiny bootable test image (a ~12 MiB qcow2) from Debian packages only:
# Debian's kernel, busybox-static as init in an initramfs (scripts/test-image/init, with
# a udev of its own for block devices, scripts/test-image/udev and udevadm), the
# virtio/cdrom/ACPI modules it needs (and virtio-scsi, ext4 and xfs for volumes), on a
# FAT16 partition booted by syslinux.
# No loop devices or mounts: sfdisk, mkfs.vfat, mcopy and syslinux's mtools installer.
#
#   scripts/build-test-image.sh [OUT.qcow2]     (default: /var/lib/berth/test-image.qcow2)
#
# Idempotent: the same packages give the same image byte for byte (SOURCE_DATE_EPOCH).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-/var/lib/berth/test-image.qcow2}

need=()
for p in linux-image-amd64 busybox-static syslinux syslinux-common mtools dosfstools fdisk qemu-utils cpio kmod; do
	dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	[ "$(id -u)" = 0 ] || { echo "build-test-image: missing ${need[*]}; run as root to install" >&2; exit 1; }
	[ -n "${BERTH_SKIP_APT_UPDATE:-}" ] || apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need[@]}"
fi

kver=$(ls /lib/modules | sort -V | tail -n1)
kernel=/boot/vmlinuz-$kver
[ -r "$kernel" ] || { echo "build-test-image: no kernel $kernel" >&2; exit 1; }
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-1700000000}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root/bin" "$root/lib/modules"
cp /bin/busybox "$root/bin/busybox"
[[ $(file "$root/bin/busybox" 2>/dev/null) == *dynamic* ]] && { echo "build-test-image: /bin/busybox is dynamic; install busybox-static" >&2; exit 1; }
install -m 0755 "$here/test-image/init" "$root/init"
mkdir -p "$root/lib/berth" "$root/sbin"
install -m 0755 "$here/test-image/udev" "$root/lib/berth/udev"
install -m 0755 "$here/test-image/udevadm" "$root/sbin/udevadm"

# Modules in load order (dependencies first), each once.
: >"$root/modules.load"
for m in virtio_pci virtio_blk virtio_net virtio_console virtio_scsi sd_mod ata_piix ata_generic sr_mod isofs ext4 xfs evdev button; do
	modprobe -d / -S "$kver" --show-depends "$m" 2>/dev/null | awk '$1=="insmod"{print $2}'
done | awk '!seen[$0]++' | while read -r ko; do
	rel=${ko#*/lib/modules/$kver/}
	case "$ko" in
	*.ko.xz) xz -dc "$ko" >"$root/lib/modules/$(basename "${ko%.xz}")"; rel=$(basename "${ko%.xz}") ;;
	*.ko.zst) zstd -qdc "$ko" >"$root/lib/modules/$(basename "${ko%.zst}")"; rel=$(basename "${ko%.zst}") ;;
	*) cp "$ko" "$root/lib/modules/"; rel=$(basename "$ko") ;;
	esac
	echo "$rel" >>"$root/modules.load"
done
find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --reproducible --quiet | gzip -9 -n) >"$work/initrd.gz"

cat >"$work/syslinux.cfg" <<CFG
DEFAULT berth
PROMPT 0
TIMEOUT 0
LABEL berth
  KERNEL /vmlinuz
  INITRD /initrd.gz
  APPEND console=ttyS0,115200 quiet loglevel=3 panic=5
CFG

size_mb=48
raw=$work/disk.raw
truncate -s ${size_mb}M "$raw"
echo 'start=2048, type=6, bootable' | sfdisk -q "$raw"
part=$work/part.img
truncate -s $(((size_mb - 1) * 1024 * 1024)) "$part"
mkfs.vfat -F 16 -n BERTHBOOT -i 0b347000 --invariant "$part" >/dev/null 2>&1 || mkfs.vfat -F 16 -n BERTHBOOT -i 0b347000 "$part" >/dev/null
export MTOOLS_SKIP_CHECK=1
mcopy -m -i "$part" "$kernel" ::/vmlinuz
mcopy -m -i "$part" "$work/initrd.gz" ::/initrd.gz
mcopy -m -i "$part" "$work/syslinux.cfg" ::/syslinux.cfg
syslinux --install "$part"
dd if="$part" of="$raw" bs=1M seek=1 conv=notrunc status=none
dd if=/usr/lib/syslinux/mbr/mbr.bin of="$raw" bs=440 count=1 conv=notrunc status=none
mkdir -p "$(dirname "$out")"
qemu-img convert -q -f raw -O qcow2 "$raw" "$out.tmp"
mv "$out.tmp" "$out"
echo "build-test-image: $out ($(du -h "$out" | cut -f1), kernel $kver)"
