#!/usr/bin/env bash
# Builds a snapshot release with GoReleaser and checks what it made (issue 33; CI runs
# it after the tests, as root, on Debian):
#
#   - `goreleaser check`, then `goreleaser release --snapshot --clean` with no network
#     (in a network namespace of its own where unshare can make one, and GOPROXY=off):
#     linux/amd64 alone (a copy of .goreleaser.yaml with goos and goarch narrowed:
#     GoReleaser v2's release has no --single-target), unless BERTH_RELEASE_ALL=1 builds
#     the whole matrix;
#   - the archive holds the programs, the docs, the man pages and the completions, and
#     checksums.txt matches it;
#   - the berthd and berth .deb install (apt-get), their --version is the snapshot's,
#     the unit, the environment file (root's, 0600), man pages and completions are in
#     place, and the unit passes `systemd-analyze verify`;
#   - the unit's ExecStart line runs as the unit would run it (systemd is not PID 1
#     here): as its User, with its EnvironmentFile, in its StateDirectory, with
#     BERTHD_FLAGS set to a loopback port; /readyz answers 200 and SIGTERM stops it
#     cleanly.
# What it installed (packages, the berth user, /var/lib/berth) is removed at the end
# unless it was there before.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
export DEBIAN_FRONTEND=noninteractive
start=$SECONDS

fail() {
	echo "release-check: FAIL: $*" >&2
	exit 1
}
step() { echo "release-check: $* ($((SECONDS - start)) s)" >&2; }

[ "$(id -u)" = 0 ] || fail "run as root: it installs the .deb packages"

gr="$(BERTH_GORELEASER_PATH=1 scripts/goreleaser.sh)"
"$gr" --version | grep -q 'GitVersion:.*2\.' || fail "$gr is not GoReleaser v2"
"$gr" check

# What the build needs from the network is fetched before, so the release itself can
# run without it: the modules (go.sum's).
go mod download
config=.goreleaser.yaml
if [ "${BERTH_RELEASE_ALL:-}" != 1 ]; then
	config="$(mktemp --suffix=.yaml)"
	sed -e 's/^    goos: \[linux, darwin\]$/    goos: [linux]/' -e 's/^    goarch: \[amd64, arm64\]$/    goarch: [amd64]/' \
		.goreleaser.yaml >"$config"
	[ "$(diff .goreleaser.yaml "$config" | grep -c '^>')" = 2 ] || fail "could not narrow .goreleaser.yaml's goos and goarch"
fi
offline=()
if unshare --net true 2>/dev/null; then
	offline=(unshare --net)
else
	echo "release-check: unshare --net not available: offline only through GOPROXY=off" >&2
fi
step "goreleaser release --snapshot --clean --config $config ${offline:+(no network)}"
GOPROXY=off GOFLAGS="-mod=readonly -buildvcs=false" "${offline[@]}" \
	"$gr" release --snapshot --clean --config "$config"

version="$(sed -n 's/.*"version":"\([^"]*\)".*/\1/p' dist/metadata.json)"
[ -n "$version" ] || fail "no version in dist/metadata.json"
case "$version" in
*-snapshot+*) ;;
*) fail "version $version is not a snapshot's" ;;
esac
step "snapshot $version"

# The archive and its checksum.
archive="dist/berth_${version}_linux_amd64.tar.gz"
[ -f "$archive" ] || fail "no $archive: $(ls dist)"
(cd dist && sha256sum --check --ignore-missing checksums.txt) || fail "checksums.txt does not match"
grep -q " ${archive#dist/}\$" dist/checksums.txt || fail "checksums.txt lacks ${archive#dist/}"
listing="$(tar -tzf "$archive")"
top="berth_${version}_linux_amd64"
for f in berthd berth terraform-provider-berth LICENSE NOTICE README.md CHANGELOG.md docs/operating.md \
	man/man1/berthd.1 man/man1/berthd-serve.1 man/man1/berth.1 man/man1/berth-server-create.1 \
	completions/berthd.bash completions/_berth completions/berth.fish systemd/berthd.service systemd/berthd.env; do
	grep -qx "$top/$f" <<<"$listing" || fail "$archive lacks $top/$f"
done

# The .deb packages.
berthd_deb="$(ls dist/berthd_"${version}"_amd64.deb)"
berth_deb="$(ls dist/berth_"${version}"_amd64.deb)"
contents="$(dpkg-deb --contents "$berthd_deb")"
grep -q '^-rw------- root/root .* \./etc/berth/berthd\.env$' <<<"$contents" ||
	fail "$berthd_deb: /etc/berth/berthd.env is not root's with mode 0600"
grep -qx '/etc/berth/berthd.env' <<<"$(dpkg-deb --info "$berthd_deb" conffiles)" ||
	fail "$berthd_deb: /etc/berth/berthd.env is not a conffile"

had_berthd=""; had_berth=""; had_user=""; had_state=""
dpkg -s berthd >/dev/null 2>&1 && had_berthd=1
dpkg -s berth >/dev/null 2>&1 && had_berth=1
getent passwd berth >/dev/null && had_user=1
[ -e /var/lib/berth ] && had_state=1
server=""
cleanup() {
	[ "$config" = .goreleaser.yaml ] || rm -f "$config"
	if [ -n "$server" ]; then kill -KILL "$server" 2>/dev/null || true; fi
	[ -n "$had_berthd" ] || apt-get purge -y berthd >/dev/null 2>&1 || true
	[ -n "$had_berth" ] || apt-get purge -y berth >/dev/null 2>&1 || true
	[ -n "$had_user" ] || { userdel berth 2>/dev/null || true; groupdel berth 2>/dev/null || true; }
	[ -n "$had_state" ] || rm -rf /var/lib/berth
	return 0
}
trap cleanup EXIT

step "apt-get install $berthd_deb $berth_deb"
apt-get install -y --reinstall --allow-downgrades "./$berthd_deb" "./$berth_deb"
want="berthd version v$version"
got="$(/usr/bin/berthd --version)"
[ "$got" = "$want" ] || fail "berthd --version: $got; want $want"
got="$(/usr/bin/berth --version)"
[ "$got" = "berth version v$version" ] || fail "berth --version: $got; want berth version v$version"
getent passwd berth | grep -q ':/var/lib/berth:/usr/sbin/nologin$' || fail "no berth system user: $(getent passwd berth)"
[ "$(stat -c '%U %a' /etc/berth/berthd.env)" = "root 600" ] || fail "/etc/berth/berthd.env: $(stat -c '%U %a' /etc/berth/berthd.env)"
unit=/usr/lib/systemd/system/berthd.service
cmp "$unit" packaging/systemd/berthd.service || fail "$unit is not packaging/systemd/berthd.service"
for f in /usr/share/man/man1/berthd-serve.1 /usr/share/man/man1/berth-server-create.1 \
	/usr/share/bash-completion/completions/berthd /usr/share/bash-completion/completions/berth \
	/usr/share/zsh/vendor-completions/_berthd /usr/share/fish/vendor_completions.d/berth.fish; do
	[ -s "$f" ] || fail "$f is not installed"
done
# The postinst starts nothing.
if pgrep -u berth >/dev/null; then fail "a process runs as berth after the install: $(pgrep -a -u berth)"; fi

step "systemd-analyze verify $unit"
if ! command -v systemd-analyze >/dev/null; then
	apt-get install -y --no-install-recommends systemd
fi
# It also looks up the unit's Documentation=man:berthd-serve(1), which the package
# installs, with man; without man-db that part is skipped.
man=(--man=yes)
if ! command -v man >/dev/null; then
	man=(--man=no)
	echo "release-check: no man here: systemd-analyze verify --man=no" >&2
fi
verify="$(systemd-analyze verify "${man[@]}" "$unit" 2>&1)" || fail "systemd-analyze verify: $verify"
# Without systemd as PID 1 it may still print lines about the machine (no D-Bus, units
# it cannot load from elsewhere); none may be about berthd.service.
if grep -i 'berthd' <<<"$verify"; then fail "systemd-analyze verify complains about the unit"; fi
[ -z "$verify" ] || echo "release-check: systemd-analyze verify printed, about the machine: $verify" >&2

# The unit's ExecStart line as systemd would run it.
key() { sed -n "s/^$1=//p" "$unit" | tail -n1; }
user="$(key User)"; group="$(key Group)"; envfile="$(key EnvironmentFile)"
state="/var/lib/$(key StateDirectory)"; workdir="$(key WorkingDirectory)"; umask_="$(key UMask)"
exec_start="$(key ExecStart)"
[ "$user" = berth ] && [ -n "$exec_start" ] && [ "$workdir" = "$state" ] || fail "unexpected unit: User=$user ExecStart=$exec_start"
# systemd would make the StateDirectory the user's. This machine's /var/lib/berth may
# be another's (CI's libvirt pool and test image are in it, scripts/libvirt-setup.sh),
# so berthd gets a fresh one of its own, bind-mounted over it in a mount namespace of
# its own: the path is the unit's, the machine's directory is left as it was.
[ -d "$state" ] || mkdir -p "$state"
fresh="$(mktemp -d)"
install -d -o "$user" -g "$group" -m "$(key StateDirectoryMode)" "$fresh/state"
port=""
for _ in 1 2 3 4 5 6 7 8; do
	p=$((20000 + RANDOM % 20000))
	if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then port=$p; break; fi
done
[ -n "$port" ] || fail "no free loopback port"
# The environment: the installed file's lines, BERTHD_FLAGS replaced by a loopback port
# of this run's (what an operator edits).
envs=()
while IFS= read -r line; do
	case "$line" in '' | '#'*) continue ;; BERTHD_FLAGS=*) line="BERTHD_FLAGS=--addr 127.0.0.1:$port" ;; esac
	envs+=("$line")
done <"$envfile"
printf '%s\n' "${envs[@]}" | grep -q '^BERTHD_FLAGS=' || fail "$envfile sets no BERTHD_FLAGS"
step "run as $user: $exec_start (BERTHD_FLAGS=--addr 127.0.0.1:$port)"
log="$(mktemp)"
# sh splits the unbraced $BERTHD_FLAGS into words, as systemd does.
unshare --mount --propagation private sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' sh "$fresh/state" "$state" \
	setpriv --reuid="$user" --regid="$group" --init-groups -- env -i PATH=/usr/bin:/bin HOME="$state" USER="$user" LOGNAME="$user" \
	STATE_DIRECTORY="$state" "${envs[@]}" \
	sh -c "cd '$workdir' && umask $umask_ && exec $exec_start" >"$log" 2>&1 &
server=$!
code=""
for _ in $(seq 1 60); do
	code="$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz" || true)"
	[ "$code" = 200 ] && break
	kill -0 "$server" 2>/dev/null || { cat "$log" >&2; fail "berthd exited before /readyz answered"; }
	sleep 0.5
done
[ "$code" = 200 ] || { cat "$log" >&2; fail "/readyz answered ${code:-nothing}, not 200"; }
[ -f "$fresh/state/berth.db" ] && [ "$(stat -c %U "$fresh/state/berth.db")" = "$user" ] ||
	{ ls -la "$fresh/state" >&2; fail "no berth.db of $user in its $state"; }
kill -TERM "$server"
status=0
wait "$server" || status=$?
server=""
[ "$status" = 0 ] || { cat "$log" >&2; fail "berthd exited $status on SIGTERM"; }
grep -q '"msg":"serving"' "$log" || { cat "$log" >&2; fail "no serving line in berthd's log"; }
rm -rf "$log" "$fresh"
step "OK: $version built, packaged, installed and served"
