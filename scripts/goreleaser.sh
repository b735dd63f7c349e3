#!/usr/bin/env bash
# Runs GoReleaser (the version pinned below) with the given arguments, building it once
# from the Go module proxy into a cache outside the checkout:
#
#   scripts/goreleaser.sh release --snapshot --clean
#   scripts/goreleaser.sh check
#
# .goreleaser.yaml is the configuration; scripts/release-check.sh (CI) builds a snapshot
# and installs its berthd .deb. The first run builds GoReleaser (`go install`, a few
# minutes on 2 cores); later runs use the cached binary and need no network: a snapshot
# release builds, archives and packages locally and publishes nothing.
# The cache is ${BERTH_TOOLS_CACHE:-/var/cache/berth-tools}/goreleaser/VERSION (or
# ~/.cache/berth-tools/goreleaser/VERSION where that cannot be written).
# BERTH_GORELEASER_PATH=1 prints the binary's path instead of running it.
set -euo pipefail

GORELEASER_VERSION=2.15.1

# shellcheck source=scripts/tools-cache.sh
. "$(dirname "${BASH_SOURCE[0]}")/tools-cache.sh"
cache="$(tools_cache goreleaser)"
dir="$cache/goreleaser/$GORELEASER_VERSION"
bin="$dir/goreleaser"

if [ ! -x "$bin" ]; then
	echo "goreleaser: building GoReleaser v$GORELEASER_VERSION into $dir (once; a few minutes)" >&2
	# Into a fresh directory, renamed into place only when complete: an interrupted or
	# concurrent build never leaves a half-written binary behind.
	tmp="$(mktemp -d "$cache/goreleaser/.build.XXXXXX")"
	trap 'rm -rf "$tmp"' EXIT
	mkdir -p "$tmp/out"
	# Outside any module, so that nothing here touches a go.mod; GoReleaser's own
	# go.mod decides its dependencies.
	(cd "$tmp" && GOFLAGS= GOBIN="$tmp/out" CGO_ENABLED=0 \
		go install "github.com/goreleaser/goreleaser/v2@v$GORELEASER_VERSION") >&2
	"$tmp/out/goreleaser" --version >&2
	if ! mv -T "$tmp/out" "$dir" 2>/dev/null; then
		if [ ! -x "$bin" ]; then
			rm -rf "$dir" # a broken copy
			mv -T "$tmp/out" "$dir"
		fi # else another run built it meanwhile
	fi
fi
if [ -n "${BERTH_GORELEASER_PATH:-}" ]; then
	echo "$bin"
	exit 0
fi
exec "$bin" "$@"
