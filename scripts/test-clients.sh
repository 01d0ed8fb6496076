#!/usr/bin/env bash
# scripts/test-clients.sh: the clients' and the examples' tests, each against a real `engram serve`:
# the Python client, the TypeScript client and the LangChain.js adapter, the README's examples.
#
# Usage: scripts/test-clients.sh   (GO=go by default; ENGRAM_BIN=PATH skips the build)
#
# Builds engram once for all three (test-python-client.sh, test-ts-client.sh, test-examples.sh), runs
# them one after the other, and exits non-zero if any failed, naming it. `make test` runs it beside the
# Go tests: its servers mostly wait, and run after them it added its whole time to the suite's.
set -uo pipefail

log() { printf 'test-clients.sh: %s\n' "$*" >&2; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GO=${GO:-go}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [[ -z "${ENGRAM_BIN:-}" ]]; then
	log "building engram"
	(cd "$root" && "$GO" build -o "$tmp/engram" ./cmd/engram) || exit 1
	export ENGRAM_BIN="$tmp/engram"
fi
export GO
failed=()
for t in test-python-client.sh test-ts-client.sh test-examples.sh; do
	start=$SECONDS
	"$root/scripts/$t" || failed+=("$t")
	log "$t: $((SECONDS - start)) s"
done
if ((${#failed[@]} > 0)); then
	log "FAILED: ${failed[*]}"
	exit 1
fi
log "all passed"
