#!/usr/bin/env bash
# scripts/testenv.sh: run a command with the real servers engram's tests need.
#
# Usage: scripts/testenv.sh COMMAND [ARGS...]
#
# Installs (cached) and starts a ChromaDB server (scripts/chroma.sh), an Ollama server with the
# generated test models (scripts/ollama.sh) and a throwaway PostgreSQL cluster (scripts/postgres.sh,
# Debian's package) on free loopback ports, installs a headless Chromium for the web view's tests
# (scripts/chromium.sh, Debian's package), exports ENGRAM_TEST_CHROMA_URL, ENGRAM_TEST_OLLAMA_HOST,
# ENGRAM_TEST_OLLAMA_MODEL, ENGRAM_TEST_OLLAMA_CHAT_MODEL, ENGRAM_TEST_POSTGRES_URL and ENGRAM_TEST_CHROMIUM,
# runs COMMAND, stops the servers whatever happens, and exits with COMMAND's status. `make test` runs the
# test suite through it. The first run on a machine builds Ollama from the Go module proxy (minutes); later
# runs reuse ${ENGRAM_TEST_CACHE:-$HOME/.cache/engram-test}.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[[ $# -gt 0 ]] || { sed -n '2,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# free_port prints a loopback port nothing listens on.
free_port() {
	local p
	for _ in $(seq 1 200); do
		p=$((20000 + RANDOM % 20000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
	echo "testenv.sh: no free port found" >&2
	return 1
}

chroma_port=$(free_port)
ollama_port=$(free_port)
while [[ "$ollama_port" == "$chroma_port" ]]; do ollama_port=$(free_port); done
ollama_pid="${ENGRAM_TEST_CACHE:-$HOME/.cache/engram-test}/ollama-$ollama_port.pid"
postgres_port=$(free_port)
while [[ "$postgres_port" == "$chroma_port" || "$postgres_port" == "$ollama_port" ]]; do postgres_port=$(free_port); done

cleanup() {
	"$ROOT/scripts/chroma.sh" stop "$chroma_port" || true
	"$ROOT/scripts/ollama.sh" stop "$ollama_pid" || true
	"$ROOT/scripts/postgres.sh" stop "$postgres_port" || true
}
trap cleanup EXIT

vars=$("$ROOT/scripts/chroma.sh" up "$chroma_port")
export "${vars?}"
vars=$("$ROOT/scripts/ollama.sh" up "$ollama_port" "$ollama_pid")
# shellcheck disable=SC2086 # one VAR=value per word
export $vars
vars=$("$ROOT/scripts/postgres.sh" up "$postgres_port")
export "${vars?}"
vars=$("$ROOT/scripts/chromium.sh" up)
export "${vars?}"
echo "testenv.sh: Chroma at $ENGRAM_TEST_CHROMA_URL, Ollama at $ENGRAM_TEST_OLLAMA_HOST, PostgreSQL at $ENGRAM_TEST_POSTGRES_URL" >&2

set +e
"$@"
rc=$?
set -e
exit $rc
