#!/usr/bin/env bash
# Metrics storage and reads: 1,000 servers with 7 days of one-minute samples, seeded
# through the store in the sampler's write order, then a day more with hourly
# pruning (steady state). Prints bytes per server per day of the metric_samples table
# (SQLite dbstat) and latency percentiles of 7d/24h/1h reads through metrics.Reader
# (what GET /v1/servers/{id}/metrics runs after its server lookup, JSON included).
# Writes the output to bench/results/metrics-<date>.txt. Figures only: nothing is
# asserted. Takes 2–4 minutes.
#
# Usage: bash bench/metrics.sh          (from any directory)
# Environment (all optional):
#   SERVERS=1000 DAYS=7 QUERIES=1000 EXTRA_HOURS=24
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TMP="$(mktemp -d /tmp/berth-metrics.XXXXXX)"
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$ROOT/bench/results"
OUT="$ROOT/bench/results/metrics-$(date -u +%F).txt"

(cd "$ROOT" && go build -o "$TMP/metrics" ./bench/metrics)
{
	echo "# bench/metrics.sh, $(date -u +%FT%TZ), $(nproc) cores, $(go version | cut -d' ' -f3)"
	"$TMP/metrics" -servers "${SERVERS:-1000}" -days "${DAYS:-7}" -queries "${QUERIES:-1000}" \
		-extra-hours "${EXTRA_HOURS:-24}" -dir "$TMP/data"
} | tee "$OUT"
