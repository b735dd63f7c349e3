#!/usr/bin/env bash
# Metering: one metering pass (ops.Service.Meter) over 100,000 running servers and
# 100,000 volumes, and the first-of-month pass over 100,000 held licenses besides
# (issue 32), on SQLite and on PostgreSQL. Each round seeds a fresh database
# (SQLite: a new data dir; PostgreSQL: a new database on the server, dropped after)
# with set-based SQL (1,000 accounts, the servers on plans 1-5 and the volumes of 10
# to 100 GB, every other one attached, with their meters and first-hour charges; the
# licenses, one or two a server, accepted and charged their month at the first hour),
# then times, at a set clock: a pass with one hour due per meter, a second pass at the
# same clock (nothing due), a catch-up pass after a 5-hour outage (5 hours per meter),
# and the first pass of the next month (every license's month and an hour per meter;
# the licenses' part of it apart, "pass 4 split").
# A pass charges each account's hours due since the last, derived from its meters, as
# one ledger row a UTC day (issue 34, internal/store/sqlstore/metering.go).
# Checks the ledger afterwards (credit == sum of rows; the ledger as the store's
# Transactions shows it, a pass's row as its hours: balances, no hour charged twice,
# each server's and volume's hours and price; each account's charges against the
# seed's prices; each license charged the new month once) and fails when a check does.
# Then computes each pass's charges by account in SQL arithmetic from the meters,
# timed, and fails when they differ from the rows the pass wrote.
# Last, times one more metering step whole and part by part (the accounts due, the
# account and meter reads, the computation in Go, each kind of write) and each
# statement of the license step, rolled back, with the plans of their reads and
# statements. The figures of all rounds and each
# store's medians go to bench/results/metering-<date>.txt, a heading per store.
# A round at 100,000 servers + 100,000 volumes without licenses took 23 s on SQLite
# on a quiet machine (2026-11-30).
#
# PostgreSQL: BERTH_BENCH_DATABASE_URL (a server where a database may be created), or
# a server of its own on 127.0.0.1:55433 (scripts/pg-test-server.sh with PostgreSQL's
# durable settings, in /tmp/berth-pg-bench), as bench/scale.sh has it.
#
# Usage: bash bench/metering.sh          (from any directory)
# Environment (all optional):
#   STORE=both (sqlite, postgres or both)
#   SERVERS=100000 VOLUMES=100000 ACCOUNTS=1000 LICENSES=100000 ROUNDS=3 BREAKDOWN=1 QUIET_WAIT=60 (see lib.sh: wait_quiet)
#   BATCH=0 (the most meter hours a metering transaction charges; 0: Berth's default)
#   TX_TARGET=0 (how long a metering transaction should take, as 500ms; 0: Berth's default)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
STORE=${STORE:-both}
case $STORE in
sqlite) STORES=(sqlite) ;;
postgres) STORES=(postgres) ;;
both) STORES=(sqlite postgres) ;;
*) echo "metering.sh: STORE is sqlite, postgres or both, not $STORE" >&2; exit 2 ;;
esac
TMP="$(mktemp -d /tmp/berth-metering.XXXXXX)"
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$ROOT/bench/results"
OUT="$ROOT/bench/results/metering-$(date -u +%F).txt"
ROUNDS=${ROUNDS:-3}
breakdown=true
[ "${BREAKDOWN:-1}" = 0 ] && breakdown=false

PGADMIN=""
if [[ " ${STORES[*]} " == *" postgres "* ]]; then
	if [ -n "${BERTH_BENCH_DATABASE_URL:-}" ]; then
		PGADMIN="$BERTH_BENCH_DATABASE_URL"
	else
		# A server of its own with PostgreSQL's durable defaults (fsync, synchronous
		# commits), unlike the tests' throwaway one.
		eval "$(BERTH_PG_DURABLE=1 BERTH_PG_DIR=/tmp/berth-pg-bench BERTH_PG_PORT=55433 "$ROOT/scripts/pg-test-server.sh")"
		PGADMIN="$BERTH_TEST_DATABASE_URL"
	fi
fi

(cd "$ROOT" && go build -o "$TMP/metering" ./bench/metering)
{
	echo "# bench/metering.sh, $(date -u +%FT%TZ), $(nproc) cores ($(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null)), $(go version | cut -d' ' -f3), commit $(commit)"
	echo "# STORE=$STORE SERVERS=${SERVERS:-100000} VOLUMES=${VOLUMES:-100000} ACCOUNTS=${ACCOUNTS:-1000} LICENSES=${LICENSES:-100000} ROUNDS=$ROUNDS BATCH=${BATCH:-0} TX_TARGET=${TX_TARGET:-0}"
} | tee "$OUT"

# medians FILE: the medians of a store's rounds in FILE. The pass lines end in: hours,
# charged, overdrawn, wall time ms, CPU ms, hours/s, transactions, longest transaction ms.
medians() {
	local f=$1 p
	echo
	echo "## medians over $ROUNDS rounds (min … max)"
	for p in "pass 1" "pass 2" "pass 3" "pass 4"; do
		grep "^$p:" "$f" | awk '{print $(NF - 4)}' >"$TMP/ms"
		grep "^$p:" "$f" | awk '{print $(NF - 3)}' >"$TMP/cpu"
		grep "^$p:" "$f" | awk '{print $NF}' >"$TMP/tx"
		printf '%-7s wall %10s ms (%s … %s), CPU %10s ms (%s … %s), longest transaction %s ms (… %s)  %s\n' "$p" \
			"$(median <"$TMP/ms")" "$(sort -g "$TMP/ms" | head -1)" "$(sort -g "$TMP/ms" | tail -1)" \
			"$(median <"$TMP/cpu")" "$(sort -g "$TMP/cpu" | head -1)" "$(sort -g "$TMP/cpu" | tail -1)" \
			"$(median <"$TMP/tx")" "$(sort -g "$TMP/tx" | tail -1)" \
			"$(grep -m1 "^$p:" "$f" | awk '{NF -= 8; sub(/^pass [0-9]+: /, ""); print}')"
	done
	# pass 4 split: licenses N months wall_ms MS in T transactions of their own | hours N wall_ms MS
	grep '^pass 4 split:' "$f" | awk '{print $8}' >"$TMP/lic"
	grep '^pass 4 split:' "$f" | awk '{print $NF}' >"$TMP/hrs"
	if [ -s "$TMP/lic" ]; then
		printf 'pass 4 split: licenses wall %10s ms (%s … %s), the hours wall %10s ms (%s … %s)  %s\n' \
			"$(median <"$TMP/lic")" "$(sort -g "$TMP/lic" | head -1)" "$(sort -g "$TMP/lic" | tail -1)" \
			"$(median <"$TMP/hrs")" "$(sort -g "$TMP/hrs" | head -1)" "$(sort -g "$TMP/hrs" | tail -1)" \
			"$(grep -m1 '^pass 4 split:' "$f" | awk '{print $5, "license months,", $17, "hours"}')"
	fi
	# derived: "  OK   pass N: <name>  S.SSSs  ...": the pass's charges computed in SQL
	# from the meters (bench/metering/derived.go)
	for p in "pass 1" "pass 3" "pass 4"; do
		grep -E "^  (OK|FAIL) +$p:" "$f" | grep -oE '[0-9]+\.[0-9]+s ' | sed 's/s $//' >"$TMP/derived"
		if [ -s "$TMP/derived" ]; then
			printf '%-7s derived in SQL from the meters: %s s (%s … %s)\n' "$p" \
				"$(median <"$TMP/derived")" "$(sort -g "$TMP/derived" | head -1)" "$(sort -g "$TMP/derived" | tail -1)"
		fi
	done
	grep '^seeded' "$f" | awk '{sub(/s$/, "", $NF); print $NF}' >"$TMP/seed"
	echo "seed    $(median <"$TMP/seed") s"
}

for store in "${STORES[@]}"; do
	where=(-dir "$TMP/data")
	title="SQLite"
	if [ "$store" = postgres ]; then
		where=(-database "$PGADMIN")
		title="PostgreSQL"
	fi
	printf '\n# %s\n' "$title" | tee -a "$OUT"
	: >"$TMP/$store.txt"
	for ((r = 1; r <= ROUNDS; r++)); do
		wait_quiet
		{
			echo
			echo "## $store: round $r of $ROUNDS, $(date -u +%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
			"$TMP/metering" -servers "${SERVERS:-100000}" -volumes "${VOLUMES:-100000}" -accounts "${ACCOUNTS:-1000}" \
				-licenses "${LICENSES:-100000}" \
				-batch "${BATCH:-0}" -tx-target "${TX_TARGET:-0}" -breakdown="$breakdown" "${where[@]}"
		} | tee -a "$TMP/$store.txt" "$OUT"
		rm -rf "$TMP/data"
	done
	medians "$TMP/$store.txt" | sed "s/^## medians/## $store: medians/" | tee -a "$OUT"
done
