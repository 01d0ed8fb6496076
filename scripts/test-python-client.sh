#!/usr/bin/env bash
# scripts/test-python-client.sh: the Python client's tests (clients/python) against a real engram serve.
#
# Usage: scripts/test-python-client.sh [unittest args...]   (GO=go by default)
#
# Builds engram from this tree, installs Debian's python3 with apt when it is missing (through sudo
# unless root), and runs the standard-library unittest suite; each test class starts its own
# `engram serve` on a free loopback port with a temporary home. ENGRAM_BIN=PATH skips the build.
set -euo pipefail

log() { printf 'test-python-client.sh: %s\n' "$*" >&2; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GO=${GO:-go}

if ! command -v python3 >/dev/null 2>&1; then
	sudo=()
	((EUID == 0)) || sudo=(sudo)
	log "installing python3 (apt)"
	"${sudo[@]}" apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq python3 >&2
fi
python3 -c 'import sys; sys.exit(sys.version_info < (3, 9))' || {
	log "python3 is $(python3 --version 2>&1); the client needs 3.9 or later"
	exit 1
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [[ -z "${ENGRAM_BIN:-}" ]]; then
	log "building engram"
	(cd "$root" && "$GO" build -o "$tmp/engram" ./cmd/engram)
	export ENGRAM_BIN="$tmp/engram"
fi

cd "$root/clients/python"
log "$(python3 --version 2>&1), engram at $ENGRAM_BIN"
# No bytecode left in the tree; -t . makes tests/ a package, as the tests import each other.
PYTHONDONTWRITEBYTECODE=1 python3 -m unittest discover -s tests -t . "$@"
