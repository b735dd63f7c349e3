#!/usr/bin/env bash
# Boot time of a real guest (issue 5): POST /v1/servers → the server is running, with
# `berthd serve --driver libvirt`, next to the same work done by hand with virsh
# (overlay volume, seed volume, seed upload, define, start), in the same run,
# alternating; both also timed on to the guest's console line saying it read its
# NoCloud seed. bench/libvirtboot/main.go does the work and documents exactly what
# each clock covers; this script builds it, runs it and keeps its report.
#
#   sudo scripts/libvirt-setup.sh && sudo scripts/build-test-image.sh
#   RUNS=7 bench/libvirt-boot.sh            (root: virsh and the console logs)
#
# Writes bench/results/libvirt-boot-<UTC date>.txt; progress goes to stderr.
# Environment (all optional): RUNS=5, PORT=18089, BERTH_TEST_IMAGE=/var/lib/berth/test-image.qcow2,
# KEEP=1 (keep the work dir: berthd, its data and log, the by-hand XML and seed).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
export PATH="$PATH:/usr/local/go/bin"
RUNS=${RUNS:-5}
PORT=${PORT:-18089}
IMAGE=${BERTH_TEST_IMAGE:-/var/lib/berth/test-image.qcow2}
[ "$(id -u)" = 0 ] || { echo "libvirt-boot.sh: run as root (virsh on qemu:///system)" >&2; exit 1; }
[ -r "$IMAGE" ] || { echo "no test image $IMAGE (scripts/build-test-image.sh)" >&2; exit 1; }

TMP="$(mktemp -d /tmp/berth-libvirtboot.XXXXXX)"
trap 'rm -rf "$TMP"' EXIT
(cd "$ROOT" && go build -o "$TMP/libvirtboot" ./bench/libvirtboot)
mkdir -p "$ROOT/bench/results"
OUT="$ROOT/bench/results/libvirt-boot-$(date -u +%F).txt"
COMMIT="$(commit)" # before the report is written into the tree
keep=()
[ "${KEEP:-}" = 1 ] && keep=(-keep)
"$TMP/libvirtboot" -root "$ROOT" -addr "127.0.0.1:$PORT" -runs "$RUNS" -image "$IMAGE" "${keep[@]}" >"$TMP/report.txt"
{
	echo "# bench/libvirt-boot.sh, RUNS=$RUNS, $(date -u +%FT%TZ), commit $COMMIT"
	echo "# $(machine | sed 's/; wrk.*//'); $(virsh -v | sed 's/^/libvirt /'), $(qemu-system-x86_64 --version | head -1 | awk '{print "QEMU", $4}'); TCG guests, 256 MiB"
	echo
	cat "$TMP/report.txt"
} >"$OUT"
cat "$OUT"
echo
echo "written to ${OUT#"$ROOT"/}"
