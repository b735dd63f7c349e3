#!/usr/bin/env bash
# DNS hosting (issue 30): berthd's embedded nameserver under dnsperf, next to
# PowerDNS Authoritative serving the same zones in the same run, then the API's
# latency while the nameserver takes query floods. bench/dns (built here) seeds
# ZONES customer zones through POST /domains, starts `berthd serve --dns-addr`,
# publishes the same zones to a pdns_server of its own through Berth's PowerDNS
# driver, checks that both answer the query file alike, and runs dnsperf against
# each, ROUNDS times, alternating; then each flood of FLOOD_KINDS. With BEFORE=<commit>
# the floods run again on a berthd built from that commit (in a temp git worktree).
# Everything on 127.0.0.1. Figures to bench/results/dns-<date>.txt (RESULT=name:
# dns-<date>-name.txt); nothing asserted.
#
# Needs: dnsperf (apt-get install -y dnsperf), pdns_server and its SQLite backend
# (apt-get install -y pdns-server pdns-backend-sqlite3; Debian then starts a pdns
# service on port 53: `systemctl disable --now pdns` if it is in the way; this script
# runs a pdns_server of its own on 127.0.0.1:18554, its API on 18581).
#
# Usage: bash bench/dns.sh          (from any directory)
# Environment (all optional):
#   ROUNDS=3 DURATION=10s ZONES=100 QUERIES=100000 CLIENTS=4 OUTSTANDING=100 THREADS=1
#   LATENCY_QPS=10000 (0: no fixed-rate latency run) QPS=false (floods only)
#   FLOOD_KINDS=mix,servers,outside FLOOD_QPS=10000 FLOOD=10s (FLOOD=0: none) FLOOD_ROUNDS=3 API_RATE=50
#   BEFORE=<commit> QUIET_WAIT=60
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
missing=()
command -v dnsperf >/dev/null || missing+=("dnsperf: apt-get install -y dnsperf")
command -v pdns_server >/dev/null || [ -x /usr/sbin/pdns_server ] || missing+=("pdns_server: apt-get install -y pdns-server pdns-backend-sqlite3")
if [ ${#missing[@]} -gt 0 ]; then
	printf '%s: missing %s\n' "$(basename "$0")" "${missing[@]}" >&2
	exit 1
fi
for p in 18500 18553 18554 18581; do port_free "$p"; done
TMP="$(mktemp -d /tmp/berth-dns.XXXXXX)"
cleanup() {
	[ -z "${BEFORE:-}" ] || git -C "$ROOT" worktree remove --force "$TMP/before-tree" 2>/dev/null || true
	rm -rf "$TMP"
}
trap cleanup EXIT
mkdir -p "$ROOT/bench/results"
OUT="$ROOT/bench/results/dns-$(date -u +%F)${RESULT:+-$RESULT}.txt"
COMMIT="$(commit)" # before the results file exists: it would count as a change

(cd "$ROOT" && go build -o "$TMP/dns" ./bench/dns && go build -o "$TMP/berthd" ./cmd/berthd)
if [ -n "${BEFORE:-}" ]; then
	git -C "$ROOT" worktree add -q --detach "$TMP/before-tree" "$BEFORE"
	(cd "$TMP/before-tree" && go build -o "$TMP/berthd-before" ./cmd/berthd)
	git -C "$ROOT" worktree remove --force "$TMP/before-tree"
fi
{
	echo "# bench/dns.sh, $(date -u +%FT%TZ), commit $COMMIT${BEFORE:+ (floods also on $BEFORE)}"
	echo "# $(nproc) cores, $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo), $(go version | cut -d' ' -f3), $(dnsperf -h 2>&1 | awk '/^Version/ {print "dnsperf", $2}'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "# ROUNDS=${ROUNDS:-3} DURATION=${DURATION:-10s} ZONES=${ZONES:-100} QUERIES=${QUERIES:-100000} CLIENTS=${CLIENTS:-4} OUTSTANDING=${OUTSTANDING:-100} THREADS=${THREADS:-1} LATENCY_QPS=${LATENCY_QPS:-10000} FLOOD_KINDS=${FLOOD_KINDS:-mix,servers,outside} FLOOD_QPS=${FLOOD_QPS:-10000} FLOOD=${FLOOD:-10s} FLOOD_ROUNDS=${FLOOD_ROUNDS:-3} API_RATE=${API_RATE:-50}"
} | tee "$OUT"
args=(-rounds "${ROUNDS:-3}" -duration "${DURATION:-10s}" -zones "${ZONES:-100}" -queries "${QUERIES:-100000}"
	-c "${CLIENTS:-4}" -q "${OUTSTANDING:-100}" -T "${THREADS:-1}" -latency-qps "${LATENCY_QPS:-10000}"
	-flood-kind "${FLOOD_KINDS:-mix,servers,outside}" -flood-qps "${FLOOD_QPS:-10000}" -flood "${FLOOD:-10s}" -flood-rounds "${FLOOD_ROUNDS:-3}"
	-api-rate "${API_RATE:-50}" -quiet-wait "${QUIET_WAIT:-60}s")
"$TMP/dns" -berthd "$TMP/berthd" "${args[@]}" -qps="${QPS:-true}" 2>&1 | grep --line-buffered -v '^==' | tee -a "$OUT"
if [ -n "${BEFORE:-}" ]; then
	{
		echo
		echo "## the floods again, berthd of $BEFORE"
		"$TMP/dns" -berthd "$TMP/berthd-before" "${args[@]}" -qps=false 2>&1 | grep --line-buffered -v '^=='
	} | tee -a "$OUT"
fi
