#!/usr/bin/env bash
# Starts a throwaway PostgreSQL server for Berth's tests (tier 3) and prints the
# line that points the tests at it:
#
#   eval "$(scripts/pg-test-server.sh)"      # sets BERTH_TEST_DATABASE_URL
#   go test ./...                            # now also on PostgreSQL
#
# The cluster lives in $BERTH_PG_DIR (default /tmp/berth-pg), listens on 127.0.0.1
# only, on $BERTH_PG_PORT (default 55432; the next free one of the nine after it when
# that is taken: the line printed names it), and trusts local connections: it is for
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
	durable=""
	[ "${BERTH_PG_DURABLE:-}" = 1 ] || durable="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
	# The port may be taken: by another server, or by a connection the kernel gave it
	# as its local port (55432 lies in Linux's ephemeral range, 32768-60999), which
	# made CI's PostgreSQL pass skip once. Then the next ports are tried.
	for try in 0 1 2 3 4 5 6 7 8 9; do
		p=$((port + try))
		if as "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
			-o "-p $p -k $dir -c listen_addresses=127.0.0.1 -c max_connections=400 $durable" >/dev/null; then
			break
		fi
		if [ "$try" = 9 ] || ! tail -n 20 "$dir/server.log" | grep -q "could not create any TCP/IP sockets"; then
			cat "$dir/server.log" >&2
			exit 1
		fi
		echo "pg-test-server: 127.0.0.1:$p is taken; trying $((p + 1))" >&2
	done
fi
# The port the server listens on: the fourth line of its pid file (it may be another
# than $port, above, or than this run's, when a running server is reused).
port=$(sed -n 4p "$dir/data/postmaster.pid")
echo "export BERTH_TEST_DATABASE_URL='postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable'"
