#!/usr/bin/env bash
# Soak benchmark (issue 6): 50 tokens (10 accounts x 5), each at the rate limit of
# 120 requests per rolling minute, for 10 minutes, against `berthd serve` on
# 127.0.0.1 with the default limit. 10 of the tokens burst past the limit now and
# then. Checks every response (2xx or a specified 4xx, never 5xx), every 429 against
# the client's own send log (429s only past 120 a minute), the limit headers, and
# berthd's resident memory (end within 10 % of the value after the first minute).
# bench/soak/main.go does the work: it builds berthd, creates the accounts and tokens
# with `berthd admin`, starts and stops berthd.
#
# Writes its report to bench/results/soak-<UTC date>.txt; progress goes to stderr.
# Exits 1 when a check fails (the report is written anyway).
#
# Usage: bash bench/soak.sh                 (from any directory; takes about 11 minutes)
#        DURATION=90s bash bench/soak.sh    (a quick try; writes soak-<date>-90s.txt)
# Environment (all optional):
#   DURATION=10m            how long the load runs
#   PORT=18300              berthd's port on 127.0.0.1
#   SOAK_ARGS="..."         more flags for bench/soak (go run ./bench/soak -h lists them)
#   KEEP=1                  keep the temp dir (binaries, data dir, berthd.log)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DURATION="${DURATION:-10m}"
PORT="${PORT:-18300}"

command -v go >/dev/null || { echo "soak.sh: go is missing" >&2; exit 1; }

TMP="$(mktemp -d "${TMPDIR:-/tmp}/berth-soak.XXXXXX")"
SOAK_PID=""
cleanup() {
	local rc=$?
	# bench/soak stops berthd itself on SIGTERM (and berthd dies with it in any case:
	# it is started with PR_SET_PDEATHSIG).
	if [ -n "$SOAK_PID" ] && kill -0 "$SOAK_PID" 2>/dev/null; then
		kill "$SOAK_PID" 2>/dev/null || true
		wait "$SOAK_PID" 2>/dev/null || true
	fi
	if [ "${KEEP:-}" = 1 ]; then
		echo "soak.sh: binaries, data and logs kept in $TMP" >&2
	else
		rm -rf "$TMP"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== building bench/soak" >&2
(cd "$ROOT" && go build -o "$TMP/soak" ./bench/soak)

mkdir -p "$ROOT/bench/results"
OUT="$ROOT/bench/results/soak-$(date -u +%F).txt"
[ "$DURATION" = 10m ] || OUT="$ROOT/bench/results/soak-$(date -u +%F)-$DURATION.txt"
COMMIT="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
[ -z "$(git -C "$ROOT" status --porcelain 2>/dev/null)" ] || COMMIT="$COMMIT (+ uncommitted changes)"

# shellcheck disable=SC2086 # SOAK_ARGS is a list of flags
"$TMP/soak" -root "$ROOT" -work "$TMP" -addr "127.0.0.1:$PORT" -duration "$DURATION" ${SOAK_ARGS:-} >"$TMP/report.txt" &
SOAK_PID=$!
rc=0
wait "$SOAK_PID" || rc=$?
SOAK_PID=""
[ -s "$TMP/report.txt" ] || { echo "soak.sh: bench/soak failed (exit $rc) before its report" >&2; exit "$rc"; }

{
	echo "# bench/soak.sh, $(date -u +%FT%TZ), $(nproc) cores, $(go version | cut -d' ' -f3), commit $COMMIT"
	echo
	cat "$TMP/report.txt"
} >"$OUT"
cat "$OUT"
echo
echo "written to ${OUT#"$ROOT"/}"
exit "$rc"
