#!/usr/bin/env bash
# Prints the path of an OpenTofu binary (the version pinned below), building it once
# from the Go module proxy into a cache outside the checkout:
#
#   TF_ACC_TERRAFORM_PATH="$(scripts/tofu.sh)"
#
# The provider's acceptance tests (internal/tfprovider) run Terraform's own test
# framework through it; scripts/test.sh does this. OpenTofu is MPL-licensed and runs
# the same providers as Terraform (HashiCorp's terraform is BUSL since 1.6).
#
# `go install github.com/opentofu/opentofu/cmd/tofu@VERSION` is refused (the module's
# go.mod has replace directives), so the module is downloaded, copied somewhere
# writable and built inside itself. That takes about 4 minutes on 2 cores the first
# time; later runs print the cached binary's path at once and need no network.
# The cache is ${BERTH_TOOLS_CACHE:-/var/cache/berth-tools}/tofu/VERSION (or
# ~/.cache/berth-tools/tofu/VERSION where that cannot be written). Progress goes to
# stderr; stdout is the path alone.
set -euo pipefail

TOFU_VERSION=1.10.10

# shellcheck source=scripts/tools-cache.sh
. "$(dirname "${BASH_SOURCE[0]}")/tools-cache.sh"
cache="$(tools_cache tofu)"
dir="$cache/tofu/$TOFU_VERSION"
bin="$dir/tofu"

if [ ! -x "$bin" ]; then
	echo "tofu: building OpenTofu v$TOFU_VERSION into $dir (once; about 4 minutes)" >&2
	# Into a fresh directory, renamed into place only when complete: an interrupted or
	# concurrent build never leaves a half-written binary behind.
	tmp="$(mktemp -d "$cache/tofu/.build.XXXXXX")"
	trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
	# Outside any module, so that nothing here touches a go.mod.
	src="$(cd "$tmp" && GOFLAGS=-mod=mod go mod download -json "github.com/opentofu/opentofu@v$TOFU_VERSION" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')"
	if [ -z "$src" ] || [ ! -d "$src" ]; then
		echo "tofu: go mod download did not give github.com/opentofu/opentofu@v$TOFU_VERSION" >&2
		exit 1
	fi
	cp -R "$src" "$tmp/src"
	chmod -R u+w "$tmp/src"
	mkdir -p "$tmp/out"
	# As OpenTofu's release builds (.goreleaser.yaml): version.dev=no drops the "-dev"
	# a plain build reports.
	(cd "$tmp/src" && GOFLAGS=-buildvcs=false CGO_ENABLED=0 go build -mod=readonly -trimpath \
		-ldflags "-s -w -X 'github.com/opentofu/opentofu/version.dev=no'" -o "$tmp/out/tofu" ./cmd/tofu) >&2
	TF_CLI_CONFIG_FILE=/dev/null "$tmp/out/tofu" version >&2
	if ! mv -T "$tmp/out" "$dir" 2>/dev/null; then
		if [ ! -x "$bin" ]; then
			rm -rf "$dir" # a broken copy
			mv -T "$tmp/out" "$dir"
		fi # else another run built it meanwhile
	fi
fi
echo "$bin"
