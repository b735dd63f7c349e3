#!/usr/bin/env bash
# Installs QEMU and libvirt from Debian and starts libvirtd without systemd, for the
# libvirt test tier and for trying Berth's libvirt driver on this machine. Idempotent:
# run it again and it only starts what is not running.
#
# What it sets up (see /work/shared/notes/libvirt-on-this-machine.md for why):
#   - qemu-system-x86, qemu-utils, libvirt-daemon(+qemu driver), libvirt-clients
#   - libvirt's standard network filters (libvirt-daemon-config-nwfilter) and the
#     ebtables/iptables they are applied with: Berth's tenant filter is built on
#     clean-traffic (internal/compute/libvirtdriver/filter.go)
#   - qemu.conf: run guests as root, no security driver (no AppArmor/SELinux here)
#   - virtlogd and libvirtd as daemons (no systemd)
#   - a Linux bridge berth0 (10.77.0.1/24) the guests' NICs join; Berth hands out
#     static addresses from a pool on it (admin pool add). No NAT, no DHCP.
#   - a directory storage pool "berth" in /var/lib/berth/pool
# KVM: Berth decides per host (admin host add --accel auto). Here /dev/kvm exists but
# no guest boots under it (no vmx/svm in the CPU), so auto picks TCG.
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "libvirt-setup: run as root" >&2; exit 1; }

BRIDGE=${BERTH_BRIDGE:-berth0}
BRIDGE_ADDR=${BERTH_BRIDGE_ADDR:-10.77.0.1/24}
POOL_DIR=${BERTH_POOL_DIR:-/var/lib/berth/pool}

need=()
for p in qemu-system-x86 qemu-utils libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients iproute2 \
	libvirt-daemon-config-nwfilter ebtables iptables; do
	dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	[ -n "${BERTH_SKIP_APT_UPDATE:-}" ] || apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need[@]}"
fi

# /var/log/libvirt/qemu holds the guests' serial and QEMU logs. libvirtd should make it
# as it starts, but on a fresh machine here it was missing while libvirtd ran, and every
# domain start then failed ("Unable to open file: /var/log/libvirt/qemu/<domain>.log").
mkdir -p /var/log/libvirt/qemu /var/run/libvirt "$POOL_DIR"
id libvirt-qemu >/dev/null 2>&1 || useradd -r -s /usr/sbin/nologin libvirt-qemu

conf=/etc/libvirt/qemu.conf
touch "$conf"
set_conf() { # key value: replace a (commented) key or append it
	if grep -Eq "^#?\s*$1\s*=" "$conf"; then
		sed -i -E "s|^#?\s*$1\s*=.*|$1 = $2|" "$conf"
	else
		echo "$1 = $2" >>"$conf"
	fi
}
set_conf user '"root"'
set_conf group '"root"'
set_conf security_driver '"none"'

pgrep -x virtlogd >/dev/null || virtlogd -d
if ! pgrep -x libvirtd >/dev/null; then
	libvirtd -d
fi
for _ in $(seq 50); do
	[ -S /var/run/libvirt/libvirt-sock ] && virsh -c qemu:///system version >/dev/null 2>&1 && break
	sleep 0.2
done
virsh -c qemu:///system version >/dev/null

# A libvirtd started before libvirt-daemon-config-nwfilter was installed has not read
# its filters: define them (twice: a filter may refer to one defined after it).
if ! virsh -q -c qemu:///system nwfilter-list 2>/dev/null | grep -qw clean-traffic; then
	for _ in 1 2; do
		for f in /etc/libvirt/nwfilter/*.xml; do
			virsh -q -c qemu:///system nwfilter-define "$f" >/dev/null 2>&1 || true
		done
	done
fi
virsh -q -c qemu:///system nwfilter-list | grep -qw clean-traffic || { echo "libvirt-setup: libvirt has no clean-traffic filter" >&2; exit 1; }

if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
	ip link add "$BRIDGE" type bridge
	ip addr add "$BRIDGE_ADDR" dev "$BRIDGE"
fi
ip link set "$BRIDGE" up

if ! virsh -q -c qemu:///system pool-info berth >/dev/null 2>&1; then
	virsh -q -c qemu:///system pool-define-as berth dir --target "$POOL_DIR" >/dev/null
fi
# (Read into a variable first: with pipefail, `virsh | grep -q` fails when grep stops
# reading early and virsh gets SIGPIPE, which would start a running pool again.)
pool_info=$(virsh -q -c qemu:///system pool-info berth)
[[ $pool_info =~ State:[[:space:]]*running ]] || virsh -q -c qemu:///system pool-start berth >/dev/null
virsh -q -c qemu:///system pool-autostart berth >/dev/null 2>&1 || true
echo "libvirt-setup: libvirtd up, bridge $BRIDGE ($BRIDGE_ADDR), pool berth ($POOL_DIR)"
