#!/usr/bin/env bash
# scripts/loadtest.sh: run the test suite while a CPU-bound load saturates every core.
#
# Usage: scripts/loadtest.sh [RUNS] [COMMAND [ARGS...]]
#
# Starts one busy loop per core (LOADTEST_WORKERS, default: nproc) at the tests' own priority,
# runs COMMAND (default: make test) RUNS times in a row (default 1) while they spin, stops them
# whatever happens, and prints how long each run took and whether it passed. Exits 0 only if every
# run passed: a test that depends on the machine being idle (a wall-clock limit, a bare sleep)
# fails here first. Logs go to ${LOADTEST_LOG:-/tmp/engram-loadtest}/run-N.log.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runs=1
if [[ $# -gt 0 && "$1" =~ ^[0-9]+$ ]]; then
	runs=$1
	shift
fi
[[ $# -gt 0 ]] || set -- make test
workers=${LOADTEST_WORKERS:-$(nproc 2>/dev/null || sysctl -n hw.ncpu)}
logdir=${LOADTEST_LOG:-/tmp/engram-loadtest}
mkdir -p "$logdir"

pids=()
stop_load() {
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	pids=()
}
trap stop_load EXIT INT TERM

for _ in $(seq 1 "$workers"); do
	# A busy loop in a subshell of its own: pure CPU, no I/O, no memory.
	bash -c 'while :; do :; done' &
	pids+=($!)
done
echo "loadtest.sh: $workers busy loops running (pids ${pids[*]}); $runs run(s) of: $*" >&2

cd "$ROOT"
failed=0
summary=()
for i in $(seq 1 "$runs"); do
	log="$logdir/run-$i.log"
	start=$(date +%s)
	if "$@" >"$log" 2>&1; then
		status=passed
	else
		status="FAILED (exit $?)"
		failed=1
	fi
	took=$(($(date +%s) - start))
	line=$(printf 'run %d: %s in %dm%02ds (log %s)' "$i" "$status" $((took / 60)) $((took % 60)) "$log")
	summary+=("$line")
	echo "loadtest.sh: $line" >&2
	if [[ "$status" != passed ]]; then
		grep -E '^(--- FAIL|FAIL|panic:)' "$log" | head -20 >&2 || true
	fi
done
stop_load
printf '%s\n' "${summary[@]}"
exit $failed
