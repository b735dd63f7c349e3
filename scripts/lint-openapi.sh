#!/usr/bin/env bash
# Lints api/openapi.yaml with two linters nobody here wrote, as .ci/run does:
#
#   - Redocly CLI (`redocly lint`, its recommended rules; config redocly.yaml, accepted
#     problems in .redocly.lint-ignore.yaml),
#   - Spectral (`spectral lint`, every rule of spectral:oas; config .spectral.yaml).
#
# Both must report no error and no warning: a rule or a problem the project accepts is
# turned off in their config, with its reason.
#
# They come from the npm registry at pinned versions and are installed once into a
# cache outside the checkout, ${BERTH_TOOLS_CACHE:-/var/cache/berth-tools}/npm (or
# ~/.cache/berth-tools/npm where that cannot be written); later runs reuse them and
# need no network. Needs node (18 or later) and npm: on Debian, apt-get install nodejs
# npm (.ci/run does it where they are missing).
#
# The API reference, docs/api.html, is rendered from the document by the same Redocly
# CLI (build-docs; the same document gives the same file byte for byte). A lint run
# fails when the committed one is not the document's as it is now;
# `scripts/lint-openapi.sh --write-docs` writes it afresh (and lints nothing).
set -euo pipefail
cd "$(dirname "$0")/.."
write_docs=false
case "${1:-}" in
--write-docs) write_docs=true ;;
"") ;;
*) echo "usage: scripts/lint-openapi.sh [--write-docs]" >&2; exit 2 ;;
esac

# Redocly CLI 2 needs Node 20.19 or later; Debian 12 ships Node 18, on which 1.34 runs.
REDOCLY_CLI_VERSION=1.34.20
SPECTRAL_CLI_VERSION=6.16.3
doc=api/openapi.yaml

# shellcheck source=scripts/tools-cache.sh
. scripts/tools-cache.sh
cache="$(tools_cache npm)"
tools="$cache/npm/redocly-cli-$REDOCLY_CLI_VERSION+spectral-cli-$SPECTRAL_CLI_VERSION"
bin="$tools/node_modules/.bin"

if ! command -v node >/dev/null; then
	echo "lint-openapi: node is not installed (Debian: apt-get install nodejs npm)" >&2
	exit 1
fi
if [ ! -x "$bin/redocly" ] || [ ! -x "$bin/spectral" ]; then
	if ! command -v npm >/dev/null; then
		echo "lint-openapi: npm is not installed (Debian: apt-get install nodejs npm)" >&2
		exit 1
	fi
	echo "lint-openapi: installing @redocly/cli@$REDOCLY_CLI_VERSION and @stoplight/spectral-cli@$SPECTRAL_CLI_VERSION into $tools"
	# Into a fresh directory, renamed into place only when complete: an interrupted or
	# concurrent install never leaves a half-filled $tools behind. No install scripts:
	# neither linter needs one (the ones in their tree only print or phone home).
	tmp="$(mktemp -d "$cache/npm/.install.XXXXXX")"
	trap 'rm -rf "$tmp"' EXIT
	echo '{"private": true}' >"$tmp/package.json"
	npm install --prefix "$tmp" --no-audit --no-fund --ignore-scripts --save-exact \
		"@redocly/cli@$REDOCLY_CLI_VERSION" "@stoplight/spectral-cli@$SPECTRAL_CLI_VERSION"
	if ! mv -T "$tmp" "$tools" 2>/dev/null; then
		if [ -x "$bin/redocly" ] && [ -x "$bin/spectral" ]; then
			rm -rf "$tmp" # another run installed them meanwhile
		else
			rm -rf "$tools" # a broken copy
			mv -T "$tmp" "$tools"
		fi
	fi
	trap - EXIT
fi

# render_docs OUT: docs/api.html's content, rendered into OUT.
render_docs() {
	REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true \
		node "$bin/redocly" build-docs "$doc" --output "$1" >/dev/null 2>&1
}
if $write_docs; then
	render_docs docs/api.html
	echo "lint-openapi: wrote docs/api.html from $doc"
	exit 0
fi

status=0

echo "== redocly lint $doc (@redocly/cli $REDOCLY_CLI_VERSION)"
# No usage report and no look-up of a newer version: CI has no use for either.
out="$(REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true \
	node "$bin/redocly" lint --config redocly.yaml --format=codeframe "$doc" 2>&1)" || status=1
printf '%s\n' "$out"
# redocly exits 0 on warnings; an accepted warning is turned off in redocly.yaml.
if printf '%s\n' "$out" | grep -Eq 'You have [0-9]+ warnings?'; then
	echo "lint-openapi: redocly reported warnings: fix them, or turn the rule off in redocly.yaml with the reason" >&2
	status=1
fi

echo "== spectral lint $doc (@stoplight/spectral-cli $SPECTRAL_CLI_VERSION, spectral:oas)"
# --fail-severity=hint: any finding fails, warnings included.
node "$bin/spectral" lint --ruleset .spectral.yaml --fail-severity=hint "$doc" || status=1

echo "== docs/api.html rendered from $doc (redocly build-docs)"
rendered="$(mktemp --suffix=.html)"
if ! render_docs "$rendered"; then
	echo "lint-openapi: redocly build-docs failed on $doc" >&2
	status=1
elif ! cmp -s "$rendered" docs/api.html; then
	echo "lint-openapi: docs/api.html is not $doc's as it is now: run scripts/lint-openapi.sh --write-docs and commit it" >&2
	status=1
fi
rm -f "$rendered"

if [ "$status" != 0 ]; then
	echo "lint-openapi: $doc does not lint clean" >&2
fi
exit "$status"
