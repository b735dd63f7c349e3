#!/usr/bin/env bash
# Berth on SQLite and on PostgreSQL (one process and three), in one run:
#   - GET /v1/servers/{id}, random id among 10,000 servers, on the bare net/http
#     handler (the same JSON from memory), Berth on SQLite, Berth on PostgreSQL with
#     one process, and with three processes on one database (three wrk, one each, the
#     connections split; their req/s summed, the worst p99 shown);
#   - POST /v1/servers (orders) per second on SQLite and on PostgreSQL (one process).
# Every berthd keeps its rate limit on with the quota raised, and runs at
# --sim-time-scale 1: the seeded servers are running already, and a faster scale would
# sample their metrics every few ms (the sampling interval scales too). Figures only:
# nothing is asserted; the table and wrk's output go to bench/results/scale-<date>.txt.
#
# PostgreSQL: BERTH_BENCH_DATABASE_URL (a server where a database may be created), or
# a server of its own on 127.0.0.1:55433 (scripts/pg-test-server.sh with PostgreSQL's
# durable settings, in /tmp/berth-pg-bench).
# Rounds: three by default, each one run of every server in turn, and the figures
# compared are each server's median: on this shared VM a server's throughput drifts
# by 5-10 % within minutes, which one round takes for a difference between servers.
# Environment (optional): SERVERS=10000 THREADS=2 CONNS=32 DURATION=10s ROUNDS=3
#   ORDER_CONNS=8 WARMUP=2s QUIET_WAIT=60 QUIET_CORES=0.3 RATE_LIMIT=100000000 KEEP=1
#   READ_CACHE=max(SERVERS, 100000): every berthd's --read-cache-servers
#   WARM_ALL=1: SQLite's berthd and PostgreSQL x1's read every server once, in turn,
#     before the rounds (get-server.sh; PostgreSQL's for SERVERS/3000 s, as its
#     misses are slower); PostgreSQL x3's are not warmed
#   SIZES="10000 100000 1000000": the whole run once per size, each on fresh stores,
#     and a table of the sizes side by side (issue 34: PostgreSQL >= 0.5 of SQLite at
#     each size)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH="$ROOT/bench"
# shellcheck source=lib.sh
. "$BENCH/lib.sh"

# sizes_table FIGURES N: the sizes side by side (run_sizes).
sizes_table() {
	echo "Berth at scale at $2 sizes: GET /v1/servers/{id} — $(date -u '+%F %T UTC')"
	echo "machine: $(machine)"
	echo "commit: $(commit)"
	echo "each size: fresh stores and berthd processes, the runs below; req/s medians over ${ROUNDS:-3} rounds; us/r: that berthd's CPU per request"
	echo
	printf '%-9s %10s %10s %8s %10s %8s %10s %9s %9s\n' servers "bare r/s" "SQLite" "us/r" "PG x1" "us/r" "PG x3" "SQL/bare" "PG1/SQL"
	awk '{printf "%-9s %10s %10s %8s %10s %8s %10s %9s %9s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9}' "$1"
}
run_sizes "${BASH_SOURCE[0]}" scale sizes_table
THREADS="${THREADS:-2}"
CONNS="${CONNS:-32}"
DURATION="${DURATION:-10s}"
ROUNDS="${ROUNDS:-3}"
ORDER_CONNS="${ORDER_CONNS:-8}"
WARMUP="${WARMUP:-2s}"
RATE_LIMIT="${RATE_LIMIT:-100000000}"
READ_CACHE="${READ_CACHE:-$((SERVERS > 100000 ? SERVERS : 100000))}"
PORTS=(18180 18181 18182 18183 18184) # bare, sqlite, pg x3

for tool in go wrk curl psql; do
	command -v "$tool" >/dev/null || { echo "scale.sh: $tool is missing" >&2; exit 1; }
done
for p in "${PORTS[@]}"; do port_free "$p"; done

BENCH_TMP="$(mktemp -d "${TMPDIR:-/tmp}/berth-scale.XXXXXX")"
TMP="$BENCH_TMP"
PIDS=()
cleanup() {
	local rc=$?
	for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
	if [ -n "${PGDB:-}" ]; then psql "$PGADMIN" -qc "DROP DATABASE IF EXISTS $PGDB WITH (FORCE)" >/dev/null 2>&1 || true; fi
	if [ "${KEEP:-}" = 1 ] || [ "$rc" -ne 0 ]; then echo "scale.sh: kept $TMP" >&2; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -n "${BERTH_BENCH_DATABASE_URL:-}" ]; then
	PGADMIN="$BERTH_BENCH_DATABASE_URL"
else
	# A server of its own with PostgreSQL's durable defaults (fsync, synchronous
	# commits), unlike the tests' throwaway one.
	eval "$(BERTH_PG_DURABLE=1 BERTH_PG_DIR=/tmp/berth-pg-bench BERTH_PG_PORT=55433 "$ROOT/scripts/pg-test-server.sh")"
	PGADMIN="$BERTH_TEST_DATABASE_URL"
fi
PGDB="berth_bench_$(date +%s)"
psql "$PGADMIN" -qc "CREATE DATABASE $PGDB" >/dev/null
PGURL="$(sed -E "s#/[^/?]*(\?|$)#/$PGDB\1#" <<<"$PGADMIN")"

log "building into $TMP"
(cd "$ROOT" && go build -o "$TMP/berthd" ./cmd/berthd && go build -o "$TMP/seed" ./bench/seed && go build -o "$TMP/bare" ./bench/bare)

log "seeding $SERVERS servers on SQLite and on PostgreSQL"
"$TMP/seed" -data "$TMP/data" -n "$SERVERS" -mode store >"$TMP/seed-sqlite.json" 2>"$TMP/seed-sqlite.log"
"$TMP/seed" -database "$PGURL" -n "$SERVERS" -mode store >"$TMP/seed-pg.json" 2>"$TMP/seed-pg.log"
S_JSON="$(cat "$TMP/seed-sqlite.json")"
P_JSON="$(cat "$TMP/seed-pg.json")"
FIRST_ID="$(seed_field "$S_JSON" first)"
LAST_ID="$(seed_field "$S_JSON" last)"
[ "$FIRST_ID..$LAST_ID" = "$(seed_field "$P_JSON" first)..$(seed_field "$P_JSON" last)" ] || { echo "scale.sh: the stores' ids differ" >&2; exit 1; }
S_TOKEN="$(seed_field "$S_JSON" token)"
P_TOKEN="$(seed_field "$P_JSON" token)"
# The GETs come from TOKEN_COUNT clients, each with a token of its own (a single token
# would make every request of the run wait for the one key's rate-limit row).
TOKEN_COUNT="${TOKEN_COUNT:-32}"
tokens() { # tokens STORE-FLAGS...: TOKEN_COUNT new tokens of account 1, comma-separated
	local i out=()
	for ((i = 0; i < TOKEN_COUNT; i++)); do
		out+=("$("$TMP/berthd" admin token create --account 1 --name "bench-$i" --scopes read "$@" | sed -E 's/.*"token":"([^"]+)".*/\1/')")
	done
	local IFS=,
	echo "${out[*]}"
}
log "creating $TOKEN_COUNT tokens on each store"
S_TOKENS="$(tokens --data "$TMP/data")"
P_TOKENS="$(tokens --database "$PGURL")"

serve() { # serve NAME PORT STORE-FLAGS...
	local name=$1 port=$2
	shift 2
	"$TMP/berthd" serve --addr "127.0.0.1:$port" --sim-time-scale 1 --rate-limit "$RATE_LIMIT" --read-cache-servers "$READ_CACHE" "$@" \
		>"$TMP/$name.out" 2>"$TMP/$name.log" &
	PIDS+=($!)
	wait_http "http://127.0.0.1:$port/v1/openapi.json" 300
}
serve sqlite "${PORTS[1]}" --data "$TMP/data"
SQLITE_PID=${PIDS[-1]}
serve pg1 "${PORTS[2]}" --database "$PGURL"
PG1_PID=${PIDS[-1]}
serve pg2 "${PORTS[3]}" --database "$PGURL"
serve pg3 "${PORTS[4]}" --database "$PGURL"
SAMPLE_ID=$(((FIRST_ID + LAST_ID) / 2))
"$TMP/bare" -addr "127.0.0.1:${PORTS[0]}" -berth "http://127.0.0.1:${PORTS[1]}/v1/servers/$SAMPLE_ID" -token "$S_TOKEN" \
	>"$TMP/bare.out" 2>"$TMP/bare.log" &
PIDS+=($!)
BARE_PID=${PIDS[-1]}
wait_http "http://127.0.0.1:${PORTS[0]}/v1/servers/1" 300

export FIRST_ID LAST_ID THREADS
if [ "${WARM_ALL:-1}" = 1 ]; then
	WARM_SECONDS=$((SERVERS / 10000 + 2))
	log "SQLite's berthd reads every server once, in turn (${WARM_SECONDS}s, not reported)"
	TOKENS=$S_TOKENS SEQUENTIAL=1 measure "$TMP/warm-all" "http://127.0.0.1:${PORTS[1]}" "$SQLITE_PID" "${WARM_SECONDS}s"
	# A server's entry on PostgreSQL stays while writes from outside Berth are
	# listened to (docs/operating.md, Memory), as SQLite's does.
	PG_WARM_SECONDS=$((SERVERS / 3000 + 2))
	log "PostgreSQL x1's berthd reads every server once, in turn (${PG_WARM_SECONDS}s, not reported)"
	TOKENS=$P_TOKENS SEQUENTIAL=1 measure "$TMP/warm-all-pg1" "http://127.0.0.1:${PORTS[2]}" "$PG1_PID" "${PG_WARM_SECONDS}s"
	for f in "$TMP/warm-all" "$TMP/warm-all-pg1"; do
		n=$(awk '/requests in/ {print $1}' "$f")
		((n >= SERVERS)) || log "  ${f##*/}: only $n requests for $SERVERS servers: not every server was read"
	done
fi
get() { # get NAME OUT PID PORT TOKENS DURATION
	TOKENS=$5 measure "$2" "http://127.0.0.1:$4" "$3" "$6"
}
# get3 OUT DURATION: three wrk at once, one per PostgreSQL process.
get3() {
	local out=$1 dur=$2 i pids=()
	for i in 2 3 4; do
		TOKENS=$P_TOKENS wrk -t1 -c$((CONNS / 3)) -d"$dur" --latency -s "$BENCH/get-server.lua" "http://127.0.0.1:${PORTS[$i]}" >"$out.$i" &
		pids+=($!)
	done
	wait "${pids[@]}"
	awk '/^Requests\/sec:/ {s += $2} END {printf "Requests/sec: %.2f\n", s}' "$out".[234] >"$out"
	for p in 50 99; do
		# wrk prints "    99%    3.21ms": the worst of the three, in ms.
		for i in 2 3 4; do wrk_pct "$out.$i" "$p"; echo; done | sort -g | tail -1 | awk -v p="$p" '{printf "     %d%%    %.2fms\n", p, $1}' >>"$out"
	done
	cat "$out".[234] | awk '/Non-2xx/ {n += $NF} END {printf "  Non-2xx or 3xx responses: %d\n", n}' >>"$out"
}
order() { # order OUT PORT TOKEN
	TOKEN=$3 wrk -t1 -c"$ORDER_CONNS" -d"$DURATION" -s "$BENCH/order.lua" "http://127.0.0.1:$2" >"$1"
}

if [ "$WARMUP" != 0 ]; then
	log "warming up"
	get bare "$TMP/w-bare" "$BARE_PID" "${PORTS[0]}" "$S_TOKENS" "$WARMUP"
	get sqlite "$TMP/w-sqlite" "$SQLITE_PID" "${PORTS[1]}" "$S_TOKENS" "$WARMUP"
	get pg1 "$TMP/w-pg1" "$PG1_PID" "${PORTS[2]}" "$P_TOKENS" "$WARMUP"
	get3 "$TMP/w-pg3" "$WARMUP"
fi
for ((r = 1; r <= ROUNDS; r++)); do
	log "round $r/$ROUNDS: GET on bare, SQLite, PostgreSQL x1, PostgreSQL x3"
	wait_quiet
	get bare "$TMP/bare-$r" "$BARE_PID" "${PORTS[0]}" "$S_TOKENS" "$DURATION"
	wait_quiet
	get sqlite "$TMP/sqlite-$r" "$SQLITE_PID" "${PORTS[1]}" "$S_TOKENS" "$DURATION"
	wait_quiet
	get pg1 "$TMP/pg1-$r" "$PG1_PID" "${PORTS[2]}" "$P_TOKENS" "$DURATION"
	wait_quiet
	get3 "$TMP/pg3-$r" "$DURATION"
done
log "orders: POST /v1/servers on SQLite and on PostgreSQL"
wait_quiet
order "$TMP/order-sqlite" "${PORTS[1]}" "$S_TOKEN"
wait_quiet
order "$TMP/order-pg1" "${PORTS[2]}" "$P_TOKEN"

med() { for ((r = 1; r <= ROUNDS; r++)); do wrk_rps "$TMP/$1-$r"; echo; done | median; }
B=$(med bare); S=$(med sqlite); P1=$(med pg1); P3=$(med pg3)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
orders() { # orders FILE: created/s and the counts
	awk -v d="${DURATION%s}" '/^orders:/ {printf "%.1f/s (created %d, other %d, 5xx %d)", $3 / d, $3, $5, $7}' "$1"
}
SUMMARY="$(
	echo "Berth at scale: GET /v1/servers/{id} and orders, SQLite and PostgreSQL — $(date -u '+%F %T UTC')"
	echo "machine: $(machine)"
	echo "commit: $(commit)"
	echo "store: $SERVERS servers each (seeded straight into the store, running); PostgreSQL $(psql "$PGADMIN" -Atc 'SHOW server_version')"
	echo "read cache: --read-cache-servers $READ_CACHE; SQLite's and PostgreSQL x1's read every server once before the rounds: ${WARM_ALL:-1} (1 yes)"
	echo "clients: $TOKEN_COUNT tokens, each request one at random; every berthd --rate-limit $RATE_LIMIT"
	echo "load: wrk -t$THREADS -c$CONNS -d$DURATION --latency (PostgreSQL x3: three wrk -t1 -c$((CONNS / 3)), one per process); orders: wrk -t1 -c$ORDER_CONNS -d$DURATION"
	echo "GOMAXPROCS: berthd $(grep -ho '"gomaxprocs":[0-9]*' "$TMP"/*.log | head -1 | cut -d: -f2) (serve's default: the CPUs + 1), bare ${GOMAXPROCS:-the runtime default, $(nproc)}"
	echo
	echo "cpu columns (one process measured, not PostgreSQL x3): cores used by that server, wrk, and every other process; cpu us/r: its CPU per request"
	printf '%-22s %10s %8s %8s %8s  %6s %6s %6s %8s\n' "GET" "req/s" "p50 ms" "p99 ms" "non-2xx" "server" "wrk" "other" "cpu us/r"
	for ((r = 1; r <= ROUNDS; r++)); do
		for n in bare sqlite pg1 pg3; do
			cpu=("-" "-" "-") us="-"
			if [ -f "$TMP/$n-$r.cpu" ]; then
				read -r -a cpu <"$TMP/$n-$r.cpu"
				us="$(us_per_req "$TMP/$n-$r")"
			fi
			printf '%-22s %10s %8s %8s %8s  %6s %6s %6s %8s\n' "$n #$r" "$(wrk_rps "$TMP/$n-$r")" "$(wrk_pct "$TMP/$n-$r" 50)" "$(wrk_pct "$TMP/$n-$r" 99)" "$(wrk_non2xx "$TMP/$n-$r")" \
				"${cpu[0]}" "${cpu[1]}" "${cpu[2]}" "$us"
		done
	done
	echo
	echo "SQLite / bare:          $(ratio "$S" "$B")  (target >= 0.7)"
	echo "PostgreSQL x1 / SQLite: $(ratio "$P1" "$S")  (target >= 0.5)"
	echo "PostgreSQL x3 / x1:     $(ratio "$P3" "$P1")  (three processes on the same two cores)"
	echo
	echo "orders on SQLite:        $(orders "$TMP/order-sqlite")"
	echo "orders on PostgreSQL x1: $(orders "$TMP/order-pg1")"
)"
if [ -n "${FIGURES_FILE:-}" ]; then
	medus() { for ((r = 1; r <= ROUNDS; r++)); do us_per_req "$TMP/$1-$r"; echo; done | median; }
	echo "$SERVERS $B $S $(medus sqlite) $P1 $(medus pg1) $P3 $(ratio "$S" "$B") $(ratio "$P1" "$S")" >>"$FIGURES_FILE"
fi
mkdir -p "$BENCH/results"
OUT="${OUT_FILE:-$BENCH/results/scale-$(date +%F).txt}"
{
	echo "$SUMMARY"
	for f in "$TMP"/bare-* "$TMP"/sqlite-* "$TMP"/pg1-* "$TMP"/pg3-*.? "$TMP"/order-*; do
		case $f in *.cpu) continue ;; esac
		echo
		echo "---- $(basename "$f") ----"
		cat "$f"
	done
} >"$OUT"
echo
echo "$SUMMARY"
echo
echo "written to ${OUT#"$ROOT"/}"
