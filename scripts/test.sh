#!/usr/bin/env bash
# Berth's test command (the README's, and what .ci/run runs):
#
#   1. the whole suite on SQLite, with the race detector: unit, store, API contract,
#      billing, console, restart and fault tests, and those of PostgreSQL's own
#      (the store suite on it, the cluster test, store copy, an outage);
#   2. every test that runs a Berth — store, API, billing, console, restart, fault,
#      operator commands, the Go SDK, the CLI, the Terraform provider — again on
#      PostgreSQL (BERTH_TEST_STORE=postgres), without the race detector (see below).
#
# PostgreSQL comes from BERTH_TEST_DATABASE_URL; when that is unset and the server
# binaries are installed (Debian: postgresql), a throwaway server is started with
# scripts/pg-test-server.sh. Without either, the PostgreSQL tests skip with a loud
# message; under BERTH_POSTGRES_REQUIRED=1 (set by .ci/run) they fail instead.
# Arguments go to go test (e.g. scripts/test.sh -run TestCluster -v).
set -euo pipefail
cd "$(dirname "$0")/.."

# Each package's tests may take longer than go test's default 10 minutes on a loaded
# machine (the API package under -race took 23 minutes at a load of 20; the libvirt
# tier's real guests, whose own deadlines derive from the boots they measure, outgrow
# it too): BERTH_TEST_TIMEOUT changes it, a -timeout among the arguments overrides it.
timeout=(-timeout "${BERTH_TEST_TIMEOUT:-60m}")

if [ -z "${BERTH_TEST_DATABASE_URL:-}" ] && ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
	eval "$(scripts/pg-test-server.sh)"
	export BERTH_TEST_DATABASE_URL
fi

# The Terraform/OpenTofu provider's acceptance tests (internal/tfprovider) run through
# OpenTofu, built once from the Go module proxy into a cache outside the checkout
# (scripts/tofu.sh); TF_ACC turns them on, as terraform-plugin-testing has it. When
# OpenTofu cannot be built they skip with a loud message; under BERTH_TOFU_REQUIRED=1
# (set by .ci/run) they fail instead.
if [ -z "${TF_ACC_TERRAFORM_PATH:-}" ] && ! TF_ACC_TERRAFORM_PATH="$(scripts/tofu.sh)"; then
	echo
	echo "*** Terraform provider acceptance tests SKIPPED: scripts/tofu.sh could not build OpenTofu ***"
	echo
	if [ "${BERTH_TOFU_REQUIRED:-}" = 1 ]; then
		exit 1
	fi
	TF_ACC_TERRAFORM_PATH=
fi
if [ -n "$TF_ACC_TERRAFORM_PATH" ]; then
	export TF_ACC=1 TF_ACC_TERRAFORM_PATH TF_ACC_PROVIDER_NAMESPACE=hashicorp TF_ACC_PROVIDER_HOST=registry.opentofu.org
fi

# The libvirt tier's guests run under TCG (no usable KVM on CI's machines): their
# boots and commands are CPU work of libvirtd's QEMU processes, and the tier waits on
# them while the other packages' tests keep both cores busy. On CI its package took
# 17 minutes alone and over 60 (go test's -timeout) among the others. The suite's own
# processes run at a lower priority than libvirtd's guests (nice, BERTH_TEST_NICE,
# default 10; 0 turns it off), so the guests get the CPU they wait for when they need
# it; the others, CPU-bound, take the rest, and the suite's total work is the same.
nice_cmd=()
if [ "${BERTH_TEST_NICE:-10}" != 0 ] && command -v nice >/dev/null; then
	nice_cmd=(nice -n "${BERTH_TEST_NICE:-10}")
fi

# The race detector watches Berth's code and every Go library's but SQLite's: the
# packages of modernc.org/sqlite/lib (SQLite itself, translated from C), modernc's
# libc and its allocator are compiled without it and without its pointer checks
# (checkptr). Those are C made Go, not code of ours; each of their memory accesses
# instrumented was most of the suite's CPU (a profile of the API package's tests:
# half of it in the detector and checkptr, most of that under SQLite), and a race
# there would be SQLite's. The driver's Go side (modernc.org/sqlite), through
# which every value passes between Berth and SQLite, stays watched.
race=(-race)
for pkg in modernc.org/sqlite/lib modernc.org/libc/... modernc.org/memory; do
	race+=(-gcflags="$pkg=-race=false -d=checkptr=0")
done

echo "== the whole suite (SQLite, and PostgreSQL's own tests)"
"${nice_cmd[@]}" go test "${race[@]}" "${timeout[@]}" "$@" ./...

# The packages whose tests run a Berth through internal/testenv, and the tests of the
# berthd binary that run it on a store of their own: the restart tests, the fault test
# (SIGKILL rounds, idempotent bursts, the ledger; its disk-full rounds are SQLite's
# alone) and the admin commands. The binary's other tests are about SQLite's data
# directory, or run on PostgreSQL in the first pass already.
# (./internal/store/... is not among them: its tests take no BERTH_TEST_STORE, and the
# first pass runs them on both stores already.)
pg_packages=(./internal/app/... ./internal/ops/... ./internal/httpapi/... ./internal/webui/... ./client/... ./cmd/berth/ ./internal/tfprovider/)
pg_binary_tests='^(TestRestartAfterSIGKILL|TestLicenseMonthsAcrossSIGKILL|TestServeDNSCluster|TestServePowerDNS|TestServePowerDNSCluster|TestAdminHostAccel|TestScheduledSnapshotDeletionAcrossRestart|TestVolumeOperationsAcrossRestart|TestFaultSIGKILL|TestAdminCommands|TestAdminMistypedCommands|TestAdminLists|TestAdminQuotas|TestGracefulShutdown|TestAdminOutputs|TestAdminHostOutputs|TestAdminBadIDs)$'
#
# This pass runs without the race detector. The code it runs is the code the first
# pass ran under -race (the handlers, the core, the workers, the SDK, the CLI, the
# provider); what differs is the store's dialect, whose PostgreSQL side — the store
# suite, LISTEN/NOTIFY, the cluster, the outage — the first pass runs under -race
# already, as PostgreSQL's own tests. Under -race this pass doubled CI's time, and CI
# has 90 minutes. BERTH_PG_RACE=1 puts the detector back.
pg_race=()
if [ "${BERTH_PG_RACE:-}" = 1 ]; then
	pg_race=("${race[@]}")
fi
if [ -n "${BERTH_TEST_DATABASE_URL:-}" ]; then
	echo "== again on PostgreSQL: ${pg_packages[*]}, and the restart, fault and admin tests of ./cmd/berthd"
	BERTH_TEST_STORE=postgres go test "${pg_race[@]}" "${timeout[@]}" "$@" "${pg_packages[@]}"
	BERTH_TEST_STORE=postgres go test "${pg_race[@]}" "${timeout[@]}" "$@" -run "$pg_binary_tests" ./cmd/berthd/
else
	echo
	echo "*** PostgreSQL pass SKIPPED: no BERTH_TEST_DATABASE_URL and no PostgreSQL server binaries (apt-get install postgresql) ***"
	echo
	if [ "${BERTH_POSTGRES_REQUIRED:-}" = 1 ]; then
		exit 1
	fi
fi
