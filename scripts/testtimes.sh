#!/usr/bin/env bash
# scripts/testtimes.sh: run a go test command, then list its slowest packages.
#
# Usage: scripts/testtimes.sh COMMAND [ARGS...]
#
# Runs COMMAND (a `go test` of several packages, or several such commands joined by a shell), shows its
# output as it comes, and at the end prints the time of each package from go test's own `ok` and `FAIL`
# lines, slowest first (TESTTIMES_TOP of them, default 10), the total wall time, and the packages
# that failed to build. Exits with COMMAND's status. `make test` runs the Go tests through it.
set -uo pipefail

[[ $# -gt 0 ]] || { sed -n '2,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$SECONDS
"$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}

# go test prints "ok  <tab>PKG<tab>12.345s" and "FAIL<tab>PKG<tab>12.345s" per package.
{
	echo "slowest packages (go test's time of each; $((SECONDS - start)) s in all):"
	awk -F'\t' '($1 ~ /^ok/ || $1 == "FAIL") && $3 ~ /^[0-9.]+s/ {
		sub(/ .*/, "", $3); t = $3; sub(/s$/, "", t)
		printf "%8.1f s  %-4s %s\n", t, ($1 ~ /^ok/ ? "ok" : "FAIL"), $2
	}' "$log" | sort -rn | head -n "${TESTTIMES_TOP:-10}"
	# A package that did not build or set up has no time; name it too.
	awk -F'\t' '$1 == "FAIL" && $2 != "" && $3 !~ /^[0-9.]+s/ { print "           FAIL " $2 }' "$log"
}
exit "$rc"
