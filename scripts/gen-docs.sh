#!/usr/bin/env bash
# Writes the man pages and shell completions of berthd and berth, generated from their
# cobra commands (internal/gendocs), into DIR (default build/docs), the pages naming
# VERSION (default: what an unstamped build says):
#
#   scripts/gen-docs.sh [DIR [VERSION]]
#
#   DIR/man/berthd.1, berthd-serve.1, ..., berth.1, berth-server-create.1, ...
#   DIR/completions/berthd.bash, _berthd, berthd.fish, berth.bash, _berth, berth.fish
#
# GoReleaser runs it before building (.goreleaser.yaml, before: hooks) and ships DIR in
# the archives and the .deb packages. Each program is built with a go build overlay that
# adds one file to its main package: an init that hands the program's root command to
# gendocs.Write and exits, so the programs themselves carry no generator command.
# The pages' date is the last commit's (SOURCE_DATE_EPOCH), so the same commit gives
# the same pages; the flags' defaults shown are the built-in ones (BERTH_* unset).
set -euo pipefail
cd "$(dirname "$0")/.."

out="${1:-build/docs}"
ldflags=()
if [ -n "${2:-}" ]; then
	ldflags=(-ldflags "-X github.com/berthhq/berth/internal/version.Version=$2")
fi
rm -rf "$out"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

if [ -z "${SOURCE_DATE_EPOCH:-}" ] && epoch="$(git log -1 --format=%ct 2>/dev/null)"; then
	export SOURCE_DATE_EPOCH="$epoch"
fi
# The environment variables berthd's and berth's flags take defaults from.
while IFS='=' read -r name _; do
	unset "$name"
done < <(env | grep '^BERTH_' || true)

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# gen PACKAGE ROOT-EXPRESSION: the expression builds the program's root command.
gen() {
	local pkg="$1" expr="$2" file
	file="$PWD/cmd/$pkg/zz_gendocs.go"
	cat >"$tmp/$pkg.go" <<GO
package main

import (
	"fmt"
	"os"

	"github.com/berthhq/berth/internal/gendocs"
)

func init() {
	if err := gendocs.Write($expr, os.Getenv("BERTH_GENDOCS_DIR")); err != nil {
		fmt.Fprintln(os.Stderr, "gen-docs:", err)
		os.Exit(1)
	}
	os.Exit(0)
}
GO
	printf '{"Replace":{"%s":"%s"}}\n' "$file" "$tmp/$pkg.go" >"$tmp/$pkg.json"
	go build "${ldflags[@]}" -overlay "$tmp/$pkg.json" -o "$tmp/$pkg" "./cmd/$pkg"
	BERTH_GENDOCS_DIR="$out" "$tmp/$pkg"
}

gen berthd 'root()'
gen berth 'rootCmd(&globals{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr})'
echo "gen-docs: $(find "$out/man" -name '*.1' | wc -l) man pages, $(find "$out/completions" -type f | wc -l) completions in $out" >&2
