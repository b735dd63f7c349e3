#!/usr/bin/env bash
# Profiles Berth under bench/get-server.sh's load. bench/profile runs Berth in-process
# as `berthd serve` does, with net/http/pprof on a separate port; it runs wrk
# unprofiled (the figures), then again while a 10 s CPU profile
# is taken, and prints `go tool pprof -top` (flat and cumulative). The bare net/http
# baseline runs last under the same load for the ratio. Output also goes to
# bench/results/profile-get-server-<date>.txt.
#
# Usage: bash bench/profile-get-server.sh        (from any directory)
# Environment (all optional):
#   FROM=/tmp/berth-bench.XXXXXX   reuse the seeded dir a `KEEP=1 bash bench/get-server.sh` left
#   API_PORT=18090 PPROF_PORT=18092 BARE_PORT=18091
#   SERVERS=10000 THREADS=2 CONNS=32 DURATION=10s WARMUP=2s RATE_LIMIT=100000000
#   READ_CACHE=max(SERVERS, 100000)  -read-cache-servers (as serve's)
#   QUIET_WAIT=60 QUIET_CORES=0.3  wait for an idle machine before each run (see lib.sh)
#   NODES=25                       rows of pprof -top
#   WARM_ALL=1                     read every server once, in turn, before the warm-up,
#                                  as bench/get-server.sh does (0: don't)
#   KEEP=1                         keep the temp dir (binaries, profiles, logs)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH="$ROOT/bench"
# shellcheck source=lib.sh
. "$BENCH/lib.sh"
VARIANTS=berthd
API_PORT="${API_PORT:-18090}"
PPROF_PORT="${PPROF_PORT:-18092}"
BARE_PORT="${BARE_PORT:-18091}"
SERVERS="${SERVERS:-10000}"
THREADS="${THREADS:-2}"
CONNS="${CONNS:-32}"
DURATION="${DURATION:-10s}"
WARMUP="${WARMUP:-2s}"
RATE_LIMIT="${RATE_LIMIT:-100000000}"
READ_CACHE="${READ_CACHE:-$((SERVERS > 100000 ? SERVERS : 100000))}"
NODES="${NODES:-25}"
PROFILE_SECONDS=10

for tool in go wrk curl; do
	command -v "$tool" >/dev/null || { echo "profile-get-server.sh: $tool is missing" >&2; exit 1; }
done
for port in "$API_PORT" "$PPROF_PORT" "$BARE_PORT"; do
	port_free "$port"
done

BENCH_TMP="$(mktemp -d "${TMPDIR:-/tmp}/berth-profile.XXXXXX")"
TMP="$BENCH_TMP"
SRV_PID=""
BARE_PID=""
stop_pid() { # stop_pid PID: TERM, then wait for it
	[ -n "$1" ] || return 0
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}
cleanup() {
	local rc=$?
	stop_pid "$SRV_PID"
	stop_pid "$BARE_PID"
	if [ "${KEEP:-}" = 1 ] || [ "$rc" -ne 0 ]; then
		echo "profile-get-server.sh: binaries, profiles and logs kept in $TMP" >&2
	else
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log "building bench/profile, bench/seed and bench/bare into $TMP"
(cd "$ROOT" && go build -o "$TMP/profile" ./bench/profile && go build -o "$TMP/seed" ./bench/seed && go build -o "$TMP/bare" ./bench/bare)

if [ -n "${FROM:-}" ]; then
	log "reusing $FROM"
	cp -r "$FROM/data" "$TMP/data"
	rm -f "$TMP/data/berthd.lock"
	cp "$FROM/seed.json" "$TMP/seed.json"
else
	log "seeding $SERVERS servers"
	# Straight into the store, running, as bench/scale.sh seeds: Berth then runs at
	# --sim-time-scale 1 (its metrics sampler at the real interval) with no orders to wait on.
	"$TMP/seed" -data "$TMP/data" -n "$SERVERS" -mode store >"$TMP/seed.json" 2>"$TMP/seed.log"
fi
SEED_JSON="$(cat "$TMP/seed.json")"
TOKEN="$(seed_field "$SEED_JSON" token)"
FIRST_ID="$(seed_field "$SEED_JSON" first)"
LAST_ID="$(seed_field "$SEED_JSON" last)"
export FIRST_ID LAST_ID TOKEN THREADS
API="http://127.0.0.1:$API_PORT"
BARE="http://127.0.0.1:$BARE_PORT"
AUTH="Authorization: Bearer $TOKEN"

REPORT="$TMP/report.txt"
: >"$REPORT"
ROWS=()

for variant in $VARIANTS; do
	log "[$variant] starting bench/profile on $API (pprof on $PPROF_PORT)"
	"$TMP/profile" -data "$TMP/data" -addr "127.0.0.1:$API_PORT" -pprof "127.0.0.1:$PPROF_PORT" \
		-rate-limit "$RATE_LIMIT" -read-cache-servers "$READ_CACHE" >"$TMP/profile-$variant.out" 2>"$TMP/profile-$variant.log" &
	SRV_PID=$!
	wait_http "$API/v1/openapi.json" 300
	wait_provisioned "$API" "$AUTH" 600 >/dev/null
	if [ "${WARM_ALL:-1}" = 1 ]; then
		WARM_SECONDS=$((SERVERS / 10000 + 2))
		log "[$variant] reading every server once, in turn (${WARM_SECONDS}s, not reported)"
		SEQUENTIAL=1 measure "$TMP/warm-all-$variant.txt" "$API" "$SRV_PID" "${WARM_SECONDS}s"
	fi
	[ "$WARMUP" = 0 ] || measure "$TMP/warmup-$variant.txt" "$API" "$SRV_PID" "$WARMUP"
	log "[$variant] measuring: wrk -t$THREADS -c$CONNS -d$DURATION"
	wait_quiet
	measure "$TMP/wrk-$variant.txt" "$API" "$SRV_PID" "$DURATION"
	log "[$variant] profiling ${PROFILE_SECONDS}s under the same load"
	wait_quiet
	wrk -t"$THREADS" -c"$CONNS" -d"$((PROFILE_SECONDS + 4))s" -s "$BENCH/get-server.lua" "$API" >"$TMP/wrk-$variant-profiled.txt" &
	WRK_PID=$!
	sleep 2
	curl -sf --max-time $((PROFILE_SECONDS + 20)) -o "$TMP/cpu-$variant.pprof" \
		"http://127.0.0.1:$PPROF_PORT/debug/pprof/profile?seconds=$PROFILE_SECONDS"
	wait "$WRK_PID"
	stop_pid "$SRV_PID"
	SRV_PID=""
	ROWS+=("$variant" "$TMP/wrk-$variant.txt")
	{
		echo "==== $variant: pprof -top (flat), ${PROFILE_SECONDS}s under load ===="
		go tool pprof -top -nodecount="$NODES" "$TMP/profile" "$TMP/cpu-$variant.pprof" 2>/dev/null
		echo
		echo "==== $variant: pprof -top -cum ===="
		go tool pprof -top -cum -nodecount="$NODES" "$TMP/profile" "$TMP/cpu-$variant.pprof" 2>/dev/null
		echo
	} >>"$REPORT"
done

log "bare net/http baseline on $BARE"
# The body of a provisioned server as Berth renders it, fetched from an unchanged build.
"$TMP/profile" -data "$TMP/data" -addr "127.0.0.1:$API_PORT" -pprof "127.0.0.1:$PPROF_PORT" \
	-rate-limit "$RATE_LIMIT" >"$TMP/profile-body.out" 2>"$TMP/profile-body.log" &
SRV_PID=$!
wait_http "$API/v1/openapi.json" 300
curl -sf -H "$AUTH" -o "$TMP/body.json" "$API/v1/servers/$(((FIRST_ID + LAST_ID) / 2))"
stop_pid "$SRV_PID"
SRV_PID=""
"$TMP/bare" -addr "127.0.0.1:$BARE_PORT" -body "$TMP/body.json" >"$TMP/bare.out" 2>"$TMP/bare.log" &
BARE_PID=$!
wait_http "$BARE/v1/servers/1" 300
[ "$WARMUP" = 0 ] || measure "$TMP/warmup-bare.txt" "$BARE" "$BARE_PID" "$WARMUP"
wait_quiet
measure "$TMP/wrk-bare.txt" "$BARE" "$BARE_PID" "$DURATION"
stop_pid "$BARE_PID"
BARE_PID=""
ROWS+=("bare net/http" "$TMP/wrk-bare.txt")
BARE_RPS="$(wrk_rps "$TMP/wrk-bare.txt")"

SUMMARY="$(
	echo "GET /v1/servers/{id} under profile — $(date -u '+%F %T UTC')"
	echo "machine: $(machine)"
	echo "commit: $(commit)"
	echo "load: wrk -t$THREADS -c$CONNS -d$DURATION --latency, random id in $FIRST_ID..$LAST_ID, warm-up $WARMUP;" \
		"Berth in-process (bench/profile, as berthd serve), --rate-limit $RATE_LIMIT"
	echo "figures from unprofiled runs; cpu columns: cores used by the server, wrk, and other processes;"
	echo "cpu us/r: server CPU per request in microseconds"
	echo
	printf '%-20s %10s %8s %8s %8s  %6s %6s %6s %8s  %s\n' "read path" "req/s" "p50 ms" "p99 ms" "non-2xx" "server" "wrk" "other" "cpu us/r" "ratio to bare"
	for ((i = 0; i < ${#ROWS[@]}; i += 2)); do
		f="${ROWS[i + 1]}"
		read -r srv_c wrk_c other_c <"$f.cpu"
		printf '%-20s %10s %8s %8s %8s  %6s %6s %6s %8s  %s\n' "${ROWS[i]}" "$(wrk_rps "$f")" "$(wrk_pct "$f" 50)" "$(wrk_pct "$f" 99)" \
			"$(wrk_non2xx "$f")" "$srv_c" "$wrk_c" "$other_c" "$(us_per_req "$f")" "$(awk -v a="$(wrk_rps "$f")" -v b="$BARE_RPS" 'BEGIN {printf "%.3f", a / b}')"
	done
)"

mkdir -p "$BENCH/results"
OUT="$BENCH/results/profile-get-server-$(date +%F).txt"
{ echo "$SUMMARY"; echo; cat "$REPORT"; } >"$OUT"
echo "$SUMMARY"
echo
cat "$REPORT"
echo "written to ${OUT#"$ROOT"/}"
