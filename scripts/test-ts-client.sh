#!/usr/bin/env bash
# scripts/test-ts-client.sh: test the TypeScript client (clients/typescript) and the LangChain.js
# adapter (clients/langchain-js) against a real `engram serve`.
#
# Usage: scripts/test-ts-client.sh   (ENGRAM_BIN=PATH skips the build)
#
# Builds engram from this checkout, installs each package's locked dependencies with `npm ci` (skipped
# while node_modules matches package-lock.json and the node version), builds the packages with tsc, and
# runs their tests with `node --test`; each test file starts its own server on a free loopback port with
# a temporary home; one runs the client in headless Chromium (scripts/chromium.sh installs it). Needs go,
# node 20 or later and npm. `make test` runs it.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
GO="${GO:-go}"

for tool in node npm "$GO"; do
	command -v "$tool" >/dev/null || { echo "test-ts-client.sh: $tool not found: install node 20 or later (with npm) and go" >&2; exit 1; }
done
node_major=$(node -p 'process.versions.node.split(".")[0]')
if (( node_major < 20 )); then
	echo "test-ts-client.sh: node $(node --version) is too old: @langchain/core needs node 20 or later" >&2
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [[ -z "${ENGRAM_BIN:-}" ]]; then
	(cd "$ROOT" && "$GO" build -o "$tmp/engram" ./cmd/engram)
	export ENGRAM_BIN="$tmp/engram"
fi
# A real headless Chromium runs the client in a browser (Debian's package, installed when missing).
vars=$("$ROOT/scripts/chromium.sh" up)
export "${vars?}"
# The tests choose the server; a developer's own must not leak in.
unset ENGRAM_URL ENGRAM_ADDR ENGRAM_TOKEN

# install installs a package's locked dependencies unless node_modules was
# installed from the same lock file by the same node.
install() {
	local stamp want
	stamp="node_modules/.engram-installed"
	want="$(sha256sum package-lock.json | cut -d' ' -f1) node $(node --version)"
	if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
		return
	fi
	npm ci --ignore-scripts --no-audit --no-fund --prefer-offline
	echo "$want" >"$stamp"
}

# The adapter links the client (file:../typescript), so the client is built first.
for pkg in clients/typescript clients/langchain-js; do
	echo "== $pkg" >&2
	cd "$ROOT/$pkg"
	install
	npm run --silent build
	node --test test/*.test.mjs
done
