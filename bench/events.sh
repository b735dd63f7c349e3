#!/usr/bin/env bash
# Events and webhooks (issue 28): what they cost, on SQLite. Builds this tree's
# berthd and the berthd of BEFORE (a commit before events, built in a temp git
# worktree removed on exit), then alternates the two ROUNDS times: orders per second
# (POST /v1/servers from CONNS clients for ORDERS) and a power action's API latency
# (POST /v1/servers/{id}/power, 300 reboots one after another). Then this tree's
# webhook deliveries: DELIVERIES events (project renames) to a receiver on 127.0.0.1
# that answers in 50 ms. Figures to bench/results/events-<date>.txt; nothing asserted.
#
# Usage: bash bench/events.sh          (from any directory)
# Environment (all optional):
#   BEFORE=81f4886 ROUNDS=3 ORDERS=20s CONNS=8 POWER=300 DELIVERIES=3000 QUIET_WAIT=60
#   HOOK=1: a webhook of every event to the receiver during this tree's orders too
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
TMP="$(mktemp -d /tmp/berth-events.XXXXXX)"
BEFORE=${BEFORE:-81f4886} # e67c712's parent: servers and operations wrote no events yet
cleanup() {
	git -C "$ROOT" worktree remove --force "$TMP/before-tree" 2>/dev/null || true
	rm -rf "$TMP"
}
trap cleanup EXIT
mkdir -p "$ROOT/bench/results"
OUT="$ROOT/bench/results/events-$(date -u +%F).txt"
ROUNDS=${ROUNDS:-3}

(cd "$ROOT" && go build -o "$TMP/events" ./bench/events && go build -o "$TMP/berthd-now" ./cmd/berthd)
git -C "$ROOT" worktree add -q --detach "$TMP/before-tree" "$BEFORE"
(cd "$TMP/before-tree" && go build -o "$TMP/berthd-before" ./cmd/berthd)
git -C "$ROOT" worktree remove --force "$TMP/before-tree"
{
	echo "# bench/events.sh, $(date -u +%FT%TZ), $(nproc) cores, $(go version | cut -d' ' -f3), commit $(commit) vs $BEFORE"
	echo "# ROUNDS=$ROUNDS ORDERS=${ORDERS:-20s} CONNS=${CONNS:-8} POWER=${POWER:-300} DELIVERIES=${DELIVERIES:-3000} HOOK=${HOOK:-0}"
} | tee "$OUT"
hook=false
[ "${HOOK:-0}" = 1 ] && hook=true
for ((r = 1; r <= ROUNDS; r++)); do
	for which in now before; do
		wait_quiet
		extra=()
		[ "$which" = now ] && extra=(-hook="$hook")
		{
			echo
			echo "## round $r of $ROUNDS, $which, $(date -u +%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
			"$TMP/events" -berthd "$TMP/berthd-$which" -orders "${ORDERS:-20s}" -conns "${CONNS:-8}" -power "${POWER:-300}" "${extra[@]}"
		} 2>&1 | grep -v '^==' | tee -a "$OUT"
	done
done
wait_quiet
{
	echo
	echo "## deliveries, now, $(date -u +%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
	"$TMP/events" -berthd "$TMP/berthd-now" -orders 0 -power 0 -deliveries "${DELIVERIES:-3000}"
} 2>&1 | grep -v '^==' | tee -a "$OUT"
