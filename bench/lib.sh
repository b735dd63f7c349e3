# Shared by the bench/*.sh scripts (sourced, not run). Needs: curl, wrk, awk, /proc.

log() { echo "== $*" >&2; }

# port_free PORT: fails when something listens on 127.0.0.1:PORT.
port_free() {
	if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then
		echo "$(basename "$0"): 127.0.0.1:$1 is in use" >&2
		return 1
	fi
}

# wait_http URL TRIES: poll until URL answers (any HTTP status), 0.1 s apart.
wait_http() {
	local url=$1 tries=$2 i
	for ((i = 0; i < tries; i++)); do
		if curl -s -o /dev/null --max-time 1 "$url"; then return 0; fi
		sleep 0.1
	done
	echo "$(basename "$0"): $url did not answer" >&2
	return 1
}

# wait_provisioned BASE AUTH POLLS: poll GET BASE/v1/servers?status=provisioning once a
# second until the list is empty; fails after POLLS polls. Prints the seconds taken.
wait_provisioned() {
	local base=$1 auth=$2 polls=$3 start=$SECONDS i body
	for ((i = 0; i < polls; i++)); do
		body="$(curl -sf --max-time 30 -H "$auth" "$base/v1/servers?status=provisioning")" || body=""
		if [ "$body" = '{"data":[]}' ]; then
			echo $((SECONDS - start))
			return 0
		fi
		((i % 5)) || log "  $(grep -o '"display_name"' <<<"$body" | wc -l) still provisioning ($((SECONDS - start))s)"
		sleep 1
	done
	echo "$(basename "$0"): provisioning did not finish in $polls polls" >&2
	return 1
}

# seed_field JSON NAME: token / first / last / seed_seconds from bench/seed's output.
seed_field() {
	case $2 in
	token) sed -E 's/.*"token":"([^"]+)".*/\1/' <<<"$1" ;;
	first) sed -E 's/.*"server_ids":\[([0-9]+),([0-9]+)\].*/\1/' <<<"$1" ;;
	last) sed -E 's/.*"server_ids":\[([0-9]+),([0-9]+)\].*/\2/' <<<"$1" ;;
	seed_seconds) sed -E 's/.*"seed_seconds":([0-9.]+).*/\1/' <<<"$1" ;;
	esac
}

# ---- wrk output ----

wrk_rps() { awk '/^Requests\/sec:/ {print $2}' "$1"; }
# wrk_pct FILE 50|75|90|99: that percentile of latency in ms.
wrk_pct() {
	awk -v p="$2%" '$1 == p {
		v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v)
		if (u == "us") v /= 1000; else if (u == "s") v *= 1000; else if (u == "m") v *= 60000
		printf "%.2f", v }' "$1"
}
wrk_non2xx() { awk '/Non-2xx or 3xx responses:/ {print $NF; f=1} END {if (!f) print 0}' "$1"; }
wrk_sockerr() { awk '/Socket errors:/ {sub(/.*Socket errors: /, ""); gsub(/ /, ""); print; f=1} END {if (!f) print "-"}' "$1"; }

# ---- CPU accounting over a wrk run ----
# The machine may be shared (tests of other people, builds): a run reports how much
# CPU the server, wrk, and everything else ("other") used, in cores.

CLK_TCK="$(getconf CLK_TCK 2>/dev/null || echo 100)"
NCPU="$(nproc)"
cpu_busy() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat; }
proc_cpu() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }
# children_cpu: CPU ticks of this shell's waited-for children. Must run in the main
# shell (not in $(...)): `times` reports the calling process's children.
children_cpu() {
	times >"$BENCH_TMP/times"
	awk 'NR == 2 {
		split($1, u, /[ms]/); split($2, s, /[ms]/)
		printf "%d\n", (u[1] * 60 + u[2] + s[1] * 60 + s[2]) * '"$CLK_TCK"' }' "$BENCH_TMP/times"
}

# wait_quiet: before a measured run, wait (at most QUIET_WAIT seconds, default 60)
# until the machine has been nearly idle (under QUIET_CORES cores busy, default 0.3)
# for one second, so that other people's builds and tests skew the figures less.
# Gives up with a note; the "other" column then shows what the run shared.
wait_quiet() {
	local limit=${QUIET_WAIT:-60} max=${QUIET_CORES:-0.3} i b0 b1
	((limit > 0)) || return 0
	for ((i = 0; i < limit; i++)); do
		b0=$(cpu_busy)
		sleep 1
		b1=$(cpu_busy)
		if awk -v d=$((b1 - b0)) -v hz="$CLK_TCK" -v m="$max" 'BEGIN {exit !(d / hz < m)}'; then
			((i == 0)) || log "  machine quiet after ${i}s"
			return 0
		fi
		((i % 10)) || log "  machine busy ($(awk -v d=$((b1 - b0)) -v hz="$CLK_TCK" 'BEGIN {printf "%.2f", d / hz}') cores), waiting up to ${limit}s"
	done
	log "  machine still busy after ${limit}s; measuring anyway"
}

# measure OUTFILE URL SERVER_PID DURATION: one wrk run; writes wrk's output to OUTFILE
# and "server_cores wrk_cores other_cores" to OUTFILE.cpu.
measure() {
	local out=$1 url=$2 pid=$3 dur=$4 b0 p0 c0 t0 b1 p1 c1 t1
	b0=$(cpu_busy)
	p0=$(proc_cpu "$pid")
	children_cpu >"$BENCH_TMP/c0"
	t0=$(date +%s.%N)
	wrk -t"$THREADS" -c"$CONNS" -d"$dur" --latency -s "$BENCH/get-server.lua" "$url" >"$out"
	t1=$(date +%s.%N)
	children_cpu >"$BENCH_TMP/c1"
	p1=$(proc_cpu "$pid")
	b1=$(cpu_busy)
	c0=$(cat "$BENCH_TMP/c0")
	c1=$(cat "$BENCH_TMP/c1")
	awk -v b=$((b1 - b0)) -v p=$((p1 - p0)) -v c=$((c1 - c0)) -v t0="$t0" -v t1="$t1" -v hz="$CLK_TCK" 'BEGIN {
		w = (t1 - t0) * hz; o = b - p - c; if (o < 0) o = 0
		printf "%.2f %.2f %.2f\n", p / w, c / w, o / w }' >"$out.cpu"
}

# us_per_req FILE: server CPU microseconds per request (from FILE.cpu and wrk's req/s);
# steadier than req/s when the machine is shared.
us_per_req() {
	local srv_c
	read -r srv_c _ <"$1.cpu"
	awk -v c="$srv_c" -v r="$(wrk_rps "$1")" 'BEGIN {printf "%.0f", c * 1e6 / r}'
}

# median of the numbers on stdin
median() { sort -g | awk 'NF {a[++n] = $1} END {if (n % 2) print a[(n + 1) / 2]; else printf "%.2f\n", (a[n / 2] + a[n / 2 + 1]) / 2}'; }

machine() {
	echo "$(nproc) cores, $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null), $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME"), $(uname -r); $(go version | awk '{print $3}'); $(wrk -v 2>&1 | head -1 | awk '{print "wrk", $2}')"
}

commit() {
	local c
	c="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
	[ -z "$(git -C "$ROOT" status --porcelain 2>/dev/null)" ] || c="$c (+ uncommitted changes in the tree)"
	echo "$c"
}

# run_sizes SCRIPT NAME TABLE: when SIZES names more than one number of servers, runs
# SCRIPT once per size (SERVERS=n; it appends its figures line to $FIGURES_FILE and
# writes its output to $OUT_FILE), prints what TABLE (a function, given the figures
# file) makes of them, writes that and every size's output to
# bench/results/NAME-<date>-sizes.txt, and exits. With one size it sets SERVERS and
# returns.
run_sizes() {
	local script=$1 name=$2 table=$3 n all sizes
	read -r -a sizes <<<"${SIZES:-${SERVERS:-10000}}"
	if ((${#sizes[@]} <= 1)); then
		SERVERS=${sizes[0]}
		return
	fi
	all="$(mktemp -d "${TMPDIR:-/tmp}/berth-$name-sizes.XXXXXX")"
	# shellcheck disable=SC2064 # $all is expanded now, on purpose
	trap "rm -rf '$all'" EXIT
	for n in "${sizes[@]}"; do
		log "=== $n servers ==="
		SERVERS=$n SIZES=$n FIGURES_FILE="$all/figures" OUT_FILE="$all/$name-$n.txt" bash "$script"
	done
	local out summary
	summary="$("$table" "$all/figures" "${#sizes[@]}")"
	out="$BENCH/results/$name-$(date +%F)-sizes.txt"
	mkdir -p "$BENCH/results"
	{
		echo "$summary"
		for n in "${sizes[@]}"; do
			echo
			echo "======== $n servers ========"
			cat "$all/$name-$n.txt"
		done
	} >"$out"
	echo
	echo "$summary"
	echo
	echo "written to ${out#"$ROOT"/}"
	exit 0
}
