#!/usr/bin/env bash
# Starts a throwaway PostgreSQL server for Berth's tests (tier 3) and prints the
# line that points the tests at it:
#
#   eval "$(scripts/pg-test-server.sh)"      # sets BERTH_TEST_DATABASE_URL
#   go test ./...                            # now also on PostgreSQL
#
# The cluster lives in $BERTH_PG_DIR (default /tmp/berth-pg), listens on 127.0.0.1
# only, on $BERTH_PG_PORT (default 55432), and trusts local connections: it is for
# tests, never for data. It trades durability for speed unless BERTH_PG_DURABLE=1. Run again, it reuses a running server. Stop it with
#   pg_ctl -D "$BERTH_PG_DIR/data" stop   (as the user postgres)
# PostgreSQL refuses to run as root, so the server runs as the user postgres (created
# by Debian's package) or, when that does not exist, as nobody.
set -euo pipefail
dir="${BERTH_PG_DIR:-/tmp/berth-pg}"
port="${BERTH_PG_PORT:-55432}"
bin="${BERTH_PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}"
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
	echo "pg-test-server: PostgreSQL's server binaries are not installed (Debian: apt-get install postgresql)" >&2
	exit 1
fi
user=postgres
id "$user" >/dev/null 2>&1 || user=nobody
as() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u "$user" -- "$@"
	else
		"$@"
	fi
}
mkdir -p "$dir"
[ "$(id -u)" = 0 ] && chown "$user" "$dir"
if [ ! -f "$dir/data/PG_VERSION" ]; then
	as "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
		{ cat "$dir/initdb.log" >&2; exit 1; }
fi
if ! as "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
	# Settings for a test server: many short-lived databases and connections, no
	# durability needed across a crash of the machine (BERTH_PG_DURABLE=1 keeps
	# PostgreSQL's own, for benchmarks).
	opts="-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=400"
	[ "${BERTH_PG_DURABLE:-}" = 1 ] || opts="$opts -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
	as "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start -o "$opts" >/dev/null ||
		{ cat "$dir/server.log" >&2; exit 1; }
fi
echo "export BERTH_TEST_DATABASE_URL='postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable'"
