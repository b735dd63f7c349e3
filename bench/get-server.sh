#!/usr/bin/env bash
# GET /v1/servers/{id} on Berth versus a bare net/http handler serving the same JSON
# from memory, in one run: 10,000 servers in the store, wrk -t2 -c32 -d10s, random id
# per request. Berth keeps its rate limit on with the quota raised
# (serve --rate-limit), so its cost is paid. Prints a table and writes it, with wrk's
# raw output, to bench/results/get-server-<date>.txt. Figures only: nothing is asserted.
#
# Several sizes in one run (issue 34: 10,000, 100,000 and 1,000,000 servers):
#   SIZES="10000 100000 1000000" SEED_MODE=store bash bench/get-server.sh
# runs the whole benchmark once per size, each on a fresh store, and adds a table of
# the sizes side by side: server CPU per request against the first size's, p99, and
# berthd's memory (RSS at the end, and its peak).
#
# Usage: bash bench/get-server.sh          (from any directory)
# Environment (all optional):
#   BERTH_PORT=18080 BARE_PORT=18081   ports on 127.0.0.1
#   SERVERS=10000                      servers to seed
#   SIZES=$SERVERS                     sizes to run one after the other (see above)
#   READ_CACHE=max(SERVERS, 100000)    berthd serve --read-cache-servers
#   IDLE=5 (60 from 1,000,000 servers)  seconds berthd's CPU is measured with no load
#                                      before the rounds (its background work: the
#                                      metrics sampler, whose round over a million
#                                      servers comes once a minute); "net us/r" leaves it out
#   SEED_MODE=order                    order (OrderServer, as the API does) or store (batched inserts)
#   THREADS=2 CONNS=32 DURATION=10s    wrk parameters
#   ROUNDS=1                           Berth/bare pairs to run, alternating; >1 adds medians
#   WARMUP=2s                          unreported wrk run on each server first (0: none)
#   WARM_ALL=1                         before it, read every server once, in turn, so that
#                                      the rounds meet the read cache as a berthd that has
#                                      served for a while holds it (0: don't)
#   QUIET_WAIT=60 QUIET_CORES=0.3      before each run, wait up to QUIET_WAIT s for the
#                                      machine to idle below QUIET_CORES cores (0: don't)
#   RATE_LIMIT=100000000               berthd serve --rate-limit (requests/min/token)
#   KEEP=1                             keep the temp dir (binaries, data, logs); reuse it
#                                      with FROM=DIR bash bench/profile-get-server.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH="$ROOT/bench"
# shellcheck source=lib.sh
. "$BENCH/lib.sh"

# sizes_table FIGURES N: the sizes side by side (run_sizes).
sizes_table() {
	echo "GET /v1/servers/{id} at $2 sizes — $(date -u '+%F %T UTC')"
	echo "machine: $(machine)"
	echo "commit: $(commit)"
	echo "each size: its own fresh store and berthd (seed mode ${SEED_MODE:-order}), the runs below; medians when ROUNDS > 1"
	echo "us/r: berthd's CPU per request; net us/r: less its CPU with no load (idle cores, measured before the rounds: 5 s, 60 s from 1,000,000 servers)"
	echo
	printf '%-9s %9s %7s %6s %6s %6s %6s %5s %8s %7s %7s %9s %6s\n' servers "req/s" "p99 ms" "us/r" "x 1st" "net" "x 1st" "idle" "cache" "RSS MB" "peak" "bare r/s" "ratio"
	awk 'NR == 1 {u = $4; n = $6} {printf "%-9s %9s %7s %6s %6.2f %6s %6.2f %5s %8s %7s %7s %9s %6s\n", $1, $2, $3, $4, $4 / u, $6, $6 / n, $5, $7, $8, $9, $10, $11}' "$1"
}
run_sizes "${BASH_SOURCE[0]}" get-server sizes_table
BERTH_PORT="${BERTH_PORT:-18080}"
BARE_PORT="${BARE_PORT:-18081}"
SERVERS="${SERVERS:-10000}"
SEED_MODE="${SEED_MODE:-order}"
THREADS="${THREADS:-2}"
CONNS="${CONNS:-32}"
DURATION="${DURATION:-10s}"
ROUNDS="${ROUNDS:-1}"
WARMUP="${WARMUP:-2s}"
RATE_LIMIT="${RATE_LIMIT:-100000000}"
READ_CACHE="${READ_CACHE:-$((SERVERS > 100000 ? SERVERS : 100000))}"
IDLE="${IDLE:-$((SERVERS >= 1000000 ? 60 : 5))}"

for tool in go wrk curl; do
	command -v "$tool" >/dev/null || { echo "get-server.sh: $tool is missing (wrk: apt-get install -y wrk)" >&2; exit 1; }
done
port_free "$BERTH_PORT"
port_free "$BARE_PORT"

BENCH_TMP="$(mktemp -d "${TMPDIR:-/tmp}/berth-bench.XXXXXX")"
TMP="$BENCH_TMP"
BERTH_PID=""
BARE_PID=""
cleanup() {
	local rc=$?
	for pid in "$BERTH_PID" "$BARE_PID"; do
		[ -n "$pid" ] && kill "$pid" 2>/dev/null || true
	done
	for pid in "$BERTH_PID" "$BARE_PID"; do
		[ -n "$pid" ] && wait "$pid" 2>/dev/null || true
	done
	if [ "${KEEP:-}" = 1 ] || [ "$rc" -ne 0 ]; then
		echo "get-server.sh: binaries, data and logs kept in $TMP" >&2
	else
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log "building berthd and the helpers into $TMP"
(cd "$ROOT" && go build -o "$TMP/berthd" ./cmd/berthd && go build -o "$TMP/seed" ./bench/seed && go build -o "$TMP/bare" ./bench/bare)

log "seeding $SERVERS servers (mode $SEED_MODE)"
"$TMP/seed" -data "$TMP/data" -n "$SERVERS" -mode "$SEED_MODE" >"$TMP/seed.json" 2>"$TMP/seed.log"
SEED_JSON="$(cat "$TMP/seed.json")"
TOKEN="$(seed_field "$SEED_JSON" token)"
FIRST_ID="$(seed_field "$SEED_JSON" first)"
LAST_ID="$(seed_field "$SEED_JSON" last)"
printf -v SEED_SECONDS '%.1f' "$(seed_field "$SEED_JSON" seed_seconds)"
log "seeded servers $FIRST_ID..$LAST_ID in ${SEED_SECONDS}s"

BERTH="http://127.0.0.1:$BERTH_PORT"
BARE="http://127.0.0.1:$BARE_PORT"
AUTH="Authorization: Bearer $TOKEN"

log "starting berthd on $BERTH"
"$TMP/berthd" serve --data "$TMP/data" --addr "127.0.0.1:$BERTH_PORT" --sim-time-scale 0.001 \
	--rate-limit "$RATE_LIMIT" --read-cache-servers "$READ_CACHE" >"$TMP/berthd.out" 2>"$TMP/berthd.log" &
BERTH_PID=$!
wait_http "$BERTH/v1/openapi.json" 300
log "waiting for provisioning to finish"
PROVISION_SECONDS="$(wait_provisioned "$BERTH" "$AUTH" 600)"
log "provisioning done after ${PROVISION_SECONDS}s"
# Measured at --sim-time-scale 1, as berthd runs for real: at 0.001 its metrics
# sampler reads all the servers every 60 ms (the interval scales too), which keeps
# a core busy under the benchmark. The servers stay running across the restart.
log "restarting berthd at --sim-time-scale 1"
kill "$BERTH_PID"
wait "$BERTH_PID" 2>/dev/null || true
"$TMP/berthd" serve --data "$TMP/data" --addr "127.0.0.1:$BERTH_PORT" --sim-time-scale 1 \
	--rate-limit "$RATE_LIMIT" --read-cache-servers "$READ_CACHE" >>"$TMP/berthd.out" 2>>"$TMP/berthd.log" &
BERTH_PID=$!
wait_http "$BERTH/v1/openapi.json" 300

SAMPLE_ID=$(((FIRST_ID + LAST_ID) / 2))
log "starting the bare server on $BARE with Berth's body for server $SAMPLE_ID"
"$TMP/bare" -addr "127.0.0.1:$BARE_PORT" -berth "$BERTH/v1/servers/$SAMPLE_ID" -token "$TOKEN" \
	>"$TMP/bare.out" 2>"$TMP/bare.log" &
BARE_PID=$!
wait_http "$BARE/v1/servers/1" 300
BODY_BERTH="$(curl -sf -H "$AUTH" "$BERTH/v1/servers/$SAMPLE_ID")"
BODY_BARE="$(curl -sf -H "$AUTH" "$BARE/v1/servers/$SAMPLE_ID")"
[ "$BODY_BERTH" = "$BODY_BARE" ] || { echo "get-server.sh: bodies differ" >&2; exit 1; }
BODY_BYTES=$(($(printf '%s' "$BODY_BERTH" | wc -c) + 1)) # + the newline $(...) strips

export FIRST_ID LAST_ID TOKEN THREADS
if [ "${WARM_ALL:-1}" = 1 ]; then
	# wrk runs for a time, not a count: long enough for every id at 10,000 req/s.
	WARM_SECONDS=$((SERVERS / 10000 + 2))
	log "reading every server once, in turn (${WARM_SECONDS}s, not reported)"
	SEQUENTIAL=1 measure "$TMP/warm-all.txt" "$BERTH" "$BERTH_PID" "${WARM_SECONDS}s"
	WARM_REQS=$(awk '/requests in/ {print $1}' "$TMP/warm-all.txt")
	((WARM_REQS >= SERVERS)) || log "  only $WARM_REQS requests for $SERVERS servers: not every server was read"
fi
if [ "$WARMUP" != 0 ]; then
	log "warming up ($WARMUP each, not reported)"
	measure "$TMP/warmup-berth.txt" "$BERTH" "$BERTH_PID" "$WARMUP"
	measure "$TMP/warmup-bare.txt" "$BARE" "$BARE_PID" "$WARMUP"
fi
IDLE_CORES=0.00
if ((IDLE > 0)); then
	log "berthd's CPU with no load, ${IDLE}s"
	wait_quiet
	i0=$(proc_cpu "$BERTH_PID")
	sleep "$IDLE"
	i1=$(proc_cpu "$BERTH_PID")
	IDLE_CORES=$(awk -v d=$((i1 - i0)) -v s="$IDLE" -v hz="$CLK_TCK" 'BEGIN {printf "%.2f", d / hz / s}')
	log "  $IDLE_CORES cores"
fi
for ((r = 1; r <= ROUNDS; r++)); do
	log "round $r/$ROUNDS: wrk -t$THREADS -c$CONNS -d$DURATION --latency on Berth"
	wait_quiet
	measure "$TMP/wrk-berth-$r.txt" "$BERTH" "$BERTH_PID" "$DURATION"
	cat "$TMP/wrk-berth-$r.txt" >&2
	log "round $r/$ROUNDS: the same on bare net/http"
	wait_quiet
	measure "$TMP/wrk-bare-$r.txt" "$BARE" "$BARE_PID" "$DURATION"
	cat "$TMP/wrk-bare-$r.txt" >&2
done

RSS_MB=$(awk '/^VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$BERTH_PID/status")
PEAK_MB=$(awk '/^VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$BERTH_PID/status")

# net_us FILE: server CPU per request less berthd's CPU with no load.
net_us() {
	local srv_c
	read -r srv_c _ <"$1.cpu"
	awk -v c="$srv_c" -v i="$IDLE_CORES" -v r="$(wrk_rps "$1")" 'BEGIN {n = c - i; if (n < 0) n = 0; printf "%.0f", n * 1e6 / r}'
}
row() { # row LABEL FILE
	read -r srv_c wrk_c other_c <"$2.cpu"
	printf '%-20s %10s %8s %8s %8s %8s  %6s %6s %6s %8s\n' "$1" "$(wrk_rps "$2")" "$(wrk_pct "$2" 50)" "$(wrk_pct "$2" 99)" \
		"$(wrk_non2xx "$2")" "$(wrk_sockerr "$2")" "$srv_c" "$wrk_c" "$other_c" "$(us_per_req "$2")"
}
med() { # med NAME FIELD: median over rounds; FIELD rps|p50|p99
	for ((r = 1; r <= ROUNDS; r++)); do
		case $2 in
		rps) wrk_rps "$TMP/wrk-$1-$r.txt" ;;
		us) us_per_req "$TMP/wrk-$1-$r.txt" ;;
		net) net_us "$TMP/wrk-$1-$r.txt" ;;
		*) wrk_pct "$TMP/wrk-$1-$r.txt" "${2#p}" ;;
		esac
		echo
	done | median
}
B_RPS=$(med berth rps)
N_RPS=$(med bare rps)
RATIO=$(awk -v a="$B_RPS" -v b="$N_RPS" 'BEGIN {printf "%.3f", a / b}')
B_P99=$(med berth p99)
# Issue 13's targets: at least 0.7 of the bare handler's req/s, p99 at most 10 ms.
MET=$(awk -v r="$RATIO" -v p="$B_P99" 'BEGIN {print (r >= 0.7 && p <= 10 ? "yes" : "no")}')

SUMMARY="$(
	echo "GET /v1/servers/{id}: Berth vs bare net/http — $(date -u '+%F %T UTC')"
	echo "machine: $(machine)"
	echo "commit: $(commit)"
	echo "store: $SERVERS servers (seed mode $SEED_MODE: ${SEED_SECONDS}s; provisioning at --sim-time-scale 0.001: ${PROVISION_SECONDS}s; measured at 1)"
	echo "read cache: --read-cache-servers $READ_CACHE, every server read once before the warm-up: ${WARM_ALL:-1} (1 yes); berthd with no load: $IDLE_CORES cores; RSS after the rounds $RSS_MB MB, peak $PEAK_MB MB"
	echo "load: wrk -t$THREADS -c$CONNS -d$DURATION --latency, random id in $FIRST_ID..$LAST_ID, warm-up $WARMUP, $ROUNDS round(s); body $BODY_BYTES bytes"
	echo "berthd: serve --rate-limit $RATE_LIMIT (limiter on), GOMAXPROCS $(grep -o '"gomaxprocs":[0-9]*' "$TMP/berthd.log" | tail -1 | cut -d: -f2)" \
		"(serve's default: the CPUs + 1; bare: ${GOMAXPROCS:-the runtime default, $(nproc)})"
	echo "cpu columns: cores used during the run by the server, by wrk, and by other processes on the machine;"
	echo "cpu us/r: server CPU per request in microseconds (steadier than req/s on a shared machine)"
	echo
	printf '%-20s %10s %8s %8s %8s %8s  %6s %6s %6s %8s\n' "server" "req/s" "p50 ms" "p99 ms" "non-2xx" "sockerr" "server" "wrk" "other" "cpu us/r"
	for ((r = 1; r <= ROUNDS; r++)); do
		sfx=""
		((ROUNDS == 1)) || sfx=" #$r"
		row "berth$sfx" "$TMP/wrk-berth-$r.txt"
		row "bare net/http$sfx" "$TMP/wrk-bare-$r.txt"
	done
	if ((ROUNDS > 1)); then
		printf '%-20s %10s %8s %8s\n' "berth median" "$B_RPS" "$(med berth p50)" "$(med berth p99)"
		printf '%-20s %10s %8s %8s\n' "bare median" "$N_RPS" "$(med bare p50)" "$(med bare p99)"
	fi
	echo
	echo "ratio berth/bare req/s: $RATIO, berth p99 ${B_P99} ms (targets >= 0.7 and <= 10 ms: $MET)"
	echo "server CPU per request: $(med berth us) us, $(med berth net) us less its CPU with no load"
)"

if [ -n "${FIGURES_FILE:-}" ]; then
	echo "$SERVERS $B_RPS $B_P99 $(med berth us) $IDLE_CORES $(med berth net) $READ_CACHE $RSS_MB $PEAK_MB $N_RPS $RATIO" >>"$FIGURES_FILE"
fi
mkdir -p "$BENCH/results"
OUT="${OUT_FILE:-$BENCH/results/get-server-$(date +%F).txt}"
{
	echo "$SUMMARY"
	for ((r = 1; r <= ROUNDS; r++)); do
		echo
		echo "---- wrk output, berth, round $r ----"
		cat "$TMP/wrk-berth-$r.txt"
		echo
		echo "---- wrk output, bare net/http, round $r ----"
		cat "$TMP/wrk-bare-$r.txt"
	done
} >"$OUT"
echo
echo "$SUMMARY"
echo
echo "written to ${OUT#"$ROOT"/}"
