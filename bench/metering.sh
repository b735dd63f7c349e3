#!/usr/bin/env bash
# Metering: one metering pass (ops.Service.Meter) over 100,000 running servers and
# 100,000 volumes on SQLite. Seeds a fresh data dir with set-based SQL (1,000
# accounts, the servers on plans 1-5 and the volumes of 10 to 100 GB, every other one
# attached, with their meters and first-hour charges), then times, at a set clock:
# a pass with one hour due per meter, a second pass at the same clock (nothing due),
# and a catch-up pass after a 5-hour outage (5 hours per server). Checks the ledger
# afterwards (credit == sum of transactions, no hour charged twice, charge count) and
# fails when a check does. Last, times each statement of one more charge step, rolled
# back, with its query plan. Each round seeds afresh; the figures of all rounds and
# their medians go to bench/results/metering-<date>.txt. About 25 s a round.
#
# Usage: bash bench/metering.sh          (from any directory)
# Environment (all optional):
#   SERVERS=100000 VOLUMES=100000 ACCOUNTS=1000 ROUNDS=3 BREAKDOWN=1 QUIET_WAIT=60 (see lib.sh: wait_quiet)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
TMP="$(mktemp -d /tmp/berth-metering.XXXXXX)"
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$ROOT/bench/results"
OUT="$ROOT/bench/results/metering-$(date -u +%F).txt"
ROUNDS=${ROUNDS:-3}
breakdown=true
[ "${BREAKDOWN:-1}" = 0 ] && breakdown=false

(cd "$ROOT" && go build -o "$TMP/metering" ./bench/metering)
{
	echo "# bench/metering.sh, $(date -u +%FT%TZ), $(nproc) cores ($(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null)), $(go version | cut -d' ' -f3), commit $(commit)"
	echo "# SERVERS=${SERVERS:-100000} VOLUMES=${VOLUMES:-100000} ACCOUNTS=${ACCOUNTS:-1000} ROUNDS=$ROUNDS"
} | tee "$OUT"
for ((r = 1; r <= ROUNDS; r++)); do
	wait_quiet
	{
		echo
		echo "## round $r of $ROUNDS, $(date -u +%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
		"$TMP/metering" -servers "${SERVERS:-100000}" -volumes "${VOLUMES:-100000}" -accounts "${ACCOUNTS:-1000}" -breakdown="$breakdown" -dir "$TMP/data-$r"
	} | tee -a "$OUT"
	rm -rf "$TMP/data-$r"
done

# The pass lines end in: hours, charged, overdrawn, wall time ms, CPU ms, hours/s.
{
	echo
	echo "## medians over $ROUNDS rounds (min … max)"
	for p in "pass 1" "pass 2" "pass 3"; do
		grep "^$p:" "$OUT" | awk '{print $(NF - 2)}' >"$TMP/ms"
		grep "^$p:" "$OUT" | awk '{print $(NF - 1)}' >"$TMP/cpu"
		printf '%-7s wall %10s ms (%s … %s), CPU %10s ms (%s … %s)  %s\n' "$p" \
			"$(median <"$TMP/ms")" "$(sort -g "$TMP/ms" | head -1)" "$(sort -g "$TMP/ms" | tail -1)" \
			"$(median <"$TMP/cpu")" "$(sort -g "$TMP/cpu" | head -1)" "$(sort -g "$TMP/cpu" | tail -1)" \
			"$(grep -m1 "^$p:" "$OUT" | awk '{NF -= 6; sub(/^pass [0-9]+: /, ""); print}')"
	done
	grep '^seeded' "$OUT" | awk '{sub(/s$/, "", $NF); print $NF}' >"$TMP/seed"
	echo "seed    $(median <"$TMP/seed") s"
} | tee -a "$OUT"
