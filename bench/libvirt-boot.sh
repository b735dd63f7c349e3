#!/usr/bin/env bash
# Boot time of a real guest: POST /v1/servers → (a) status "running" and (b) the guest's
# console line saying it read its NoCloud seed ("BERTH-SEED ipv4=..."), with
# `berthd serve --driver libvirt`; next to `virsh define` + `virsh start` of the same
# domain XML (same disk overlay on the same base, same seed) by hand → (b), in the same
# run, alternating. Berth's time includes the HTTP call, the job queue, placement,
# address allocation, the overlay, building and uploading the seed ISO and the define;
# the hand-made run gets its volumes prepared before its clock starts. Columns:
# berth→running (status running: the domain was started) and virsh→started (define +
# start returned) compare the control planes; the →seed columns add the guest's boot,
# which under TCG on a shared machine varies far more than either.
#
#   sudo scripts/libvirt-setup.sh && sudo scripts/build-test-image.sh
#   RUNS=3 bench/libvirt-boot.sh            (root: virsh and the console logs)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
export PATH="$PATH:/usr/local/go/bin"
RUNS=${RUNS:-3}
PORT=${PORT:-18089}
IMAGE=${BERTH_TEST_IMAGE:-/var/lib/berth/test-image.qcow2}
CONSOLE=/var/log/libvirt/qemu
V="virsh -q -c qemu:///system"
port_free "$PORT"
[ -r "$IMAGE" ] || { echo "no test image $IMAGE (scripts/build-test-image.sh)" >&2; exit 1; }

tmp=$(mktemp -d)
pid=""
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
	for d in $($V list --all --name | grep -E '^(benchboot|benchhand)-' || true); do
		$V destroy "$d" >/dev/null 2>&1 || true
		$V undefine "$d" --snapshots-metadata >/dev/null 2>&1 || true
	done
	$V pool-refresh berth >/dev/null
	for v in $($V vol-list berth | awk '{print $1}' | grep -E '^(benchboot|benchhand)-' || true); do
		$V vol-delete "$v" --pool berth >/dev/null 2>&1 || true
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc; }
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))" "$1"; }
wait_console() { # FILE LINE TIMEOUT_S
	local i
	for ((i = 0; i < $3 * 20; i++)); do
		grep -aq "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "console $1: no '$2'" >&2
	return 1
}

go build -o "$tmp/berthd" ./cmd/berthd
B="$tmp/berthd --data $tmp/data"
cat >"$tmp/catalog.yaml" <<'YAML'
plans:
  - {id: 1, name: tiny-1c-256m, vcpus: 1, memory_mb: 256, disk_gb: 1, price_hourly: "0.0010", price_monthly: "0.5000"}
  - {id: 2, name: tiny-2c-384m, vcpus: 2, memory_mb: 384, disk_gb: 2, price_hourly: "0.0020", price_monthly: "1.0000"}
images:
  - {id: 1, name: ubuntu-24.04, os: ubuntu, version: "24.04"}
  - {id: 2, name: debian-12, os: debian, version: "12"}
apps: []
locations:
  - {id: 1, name: lab1, city: Here, country: DE, snapshot_price_gb_hour: "0.0001", images: [1, 2], plans: [{id: 1}, {id: 2}]}
YAML
$B admin catalog apply "$tmp/catalog.yaml" >/dev/null
$B admin host add --location 1 --uri qemu:///system --vcpus 16 --memory-gb 16 --disk-gb 100 >/dev/null
$B admin pool add --location 1 --cidr 10.77.0.0/24 --gateway 10.77.0.1 --first 10.77.0.210 --last 10.77.0.230 --ipv6-prefix fd77::/64 >/dev/null
base=$($B admin image import --location 1 --image 1 "$IMAGE" | json 'd["hosts"][0]["path"]')
acct=$($B admin account create --email bench@berth.local --password benchbench --credit 100 | json 'd["id"]')
token=$($B admin token create --account "$acct" --name bench --scopes servers | json 'd["token"]')
$B serve --driver libvirt --addr "127.0.0.1:$PORT" --libvirt-prefix benchboot- --rate-limit 1000000 2>"$tmp/serve.log" &
pid=$!
wait_http "http://127.0.0.1:$PORT/v1/openapi.json" 100
api="http://127.0.0.1:$PORT/v1"
auth="Authorization: Bearer $token"

printf '%-4s %-16s %14s %14s %12s %12s %10s\n' run server "berth→running" "virsh→started" "berth→seed" "virsh→seed" overhead
for ((r = 1; r <= RUNS; r++)); do
	# Berth
	t0=$(now)
	name=$(curl -sf -H "$auth" -H 'Content-Type: application/json' -d '{"plan_id":1,"location_id":1,"image_id":1}' "$api/servers" | json 'd["data"]["name"]')
	until [ "$(curl -sf -H "$auth" "$api/servers/$name" | json 'd["data"]["status"]')" = running ]; do sleep 0.05; done
	t_run=$(since "$t0")
	wait_console "$CONSOLE/benchboot-$name-console.log" "BERTH-SEED ipv4=" 180
	t_seed=$(since "$t0")
	# The same domain by hand: its XML, a new overlay on the same base, the same seed.
	hand=benchhand-$r-$name
	$V dumpxml --inactive "benchboot-$name" | sed -e "s/benchboot-$name/$hand/g" -e '/<uuid>/d' >"$tmp/$hand.xml"
	$V vol-download "benchboot-$name-seed-1.iso" "$tmp/seed.iso" --pool berth
	curl -sf -o /dev/null -X DELETE -H "$auth" "$api/servers/$name"
	$V vol-create-as berth "$hand-disk-1.qcow2" 1G --format qcow2 --backing-vol "$base" --backing-vol-format qcow2 >/dev/null
	$V vol-create-as berth "$hand-seed-1.iso" "$(stat -c %s "$tmp/seed.iso")" --format raw >/dev/null
	$V vol-upload "$hand-seed-1.iso" "$tmp/seed.iso" --pool berth
	while $V dominfo "benchboot-$name" >/dev/null 2>&1; do sleep 0.1; done # Berth's guest gone first
	t0=$(now)
	$V define "$tmp/$hand.xml" >/dev/null
	$V start "$hand" >/dev/null
	t_started=$(since "$t0")
	wait_console "$CONSOLE/$hand-console.log" "BERTH-SEED ipv4=" 180
	t_hand=$(since "$t0")
	$V destroy "$hand" >/dev/null
	$V undefine "$hand" >/dev/null
	$V vol-delete "$hand-disk-1.qcow2" --pool berth >/dev/null
	$V vol-delete "$hand-seed-1.iso" --pool berth >/dev/null
	printf '%-4s %-16s %13.2fs %13.2fs %11.2fs %11.2fs %+9.1f%%\n' "$r" "$name" "$t_run" "$t_started" "$t_seed" "$t_hand" "$(echo "($t_seed - $t_hand) * 100 / $t_hand" | bc -l)"
done
echo "(load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; TCG guests, 256 MiB)"
