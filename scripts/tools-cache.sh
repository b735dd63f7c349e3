# Sourced by the scripts that build or install a tool once and keep it outside the
# checkout (tofu.sh, goreleaser.sh, lint-openapi.sh).
#
# tools_cache KIND prints the cache the tools of KIND go into, making KIND's
# directory there: ${BERTH_TOOLS_CACHE:-/var/cache/berth-tools}, or
# ${XDG_CACHE_HOME:-~/.cache}/berth-tools where that cannot be written.
tools_cache() {
	local cache="${BERTH_TOOLS_CACHE:-/var/cache/berth-tools}"
	if ! mkdir -p "$cache/$1" 2>/dev/null || [ ! -w "$cache/$1" ]; then
		cache="${XDG_CACHE_HOME:-$HOME/.cache}/berth-tools"
		mkdir -p "$cache/$1"
	fi
	printf '%s\n' "$cache"
}
