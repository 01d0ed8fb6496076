#!/usr/bin/env bash
# scripts/test-examples.sh: runs the README's "Use it from your agent" examples against a real engram.
#
# Usage: scripts/test-examples.sh   (GO=go by default; ENGRAM_BIN=PATH skips the build)
#
# examples/mcp/client.py speaks MCP over stdio to `engram mcp`, examples/claude-code/hook.sh feeds
# Claude Code hook events to `engram hook claude-code`, each on a home of its own; examples/http/quickstart.sh
# talks to a real `engram serve` with curl. Each must find what it remembered. python3 and curl are
# installed with apt when missing. (The Python and TypeScript clients' examples run in their own tests.)
set -euo pipefail

log() { printf 'test-examples.sh: %s\n' "$*" >&2; }
fail() { log "FAIL: $*"; exit 1; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GO=${GO:-go}
missing=()
command -v python3 >/dev/null 2>&1 || missing+=(python3)
command -v curl >/dev/null 2>&1 || missing+=(curl)
if ((${#missing[@]})); then
	sudo=()
	((EUID == 0)) || sudo=(sudo)
	log "installing ${missing[*]} (apt)"
	"${sudo[@]}" apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >&2
fi

tmp=$(mktemp -d)
pid=
cleanup() {
	[[ -n "$pid" ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
bin=${ENGRAM_BIN:-}
if [[ -z "$bin" ]]; then
	log "building engram"
	(cd "$root" && "$GO" build -o "$tmp/engram" ./cmd/engram)
	bin="$tmp/engram"
fi
cd "$root"

log "MCP over stdio"
out=$(python3 examples/mcp/client.py "$bin" --home "$tmp/mcp-home")
grep -q "recall" <<<"$out" || fail "tools/list lacks recall: $out"
grep -q "port 5433" <<<"$out" || fail "recall did not find the remembered turn: $out"

log "Claude Code hook"
out=$(examples/claude-code/hook.sh "$bin --home $tmp/cc-home")
grep -q "<engram-memory" <<<"$out" || fail "no memory block for the prompt: $out"
grep -q "scripts/deploy.sh --canary" <<<"$out" || fail "the archived session is not recalled: $out"

log "plain HTTP"
mkdir -p "$tmp/http-home"
"$bin" --home "$tmp/http-home" serve --addr 127.0.0.1:0 >"$tmp/serve.log" 2>&1 &
pid=$!
# Wait for the server: until it answers, or fails the test by exiting.
while :; do
	kill -0 "$pid" 2>/dev/null || fail "engram serve exited: $(cat "$tmp/serve.log")"
	if addr=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["addr"] if d.get("pid")==int(sys.argv[2]) else "")' \
		"$tmp/http-home/serve.json" "$pid" 2>/dev/null) && [[ -n "$addr" ]] &&
		curl -fsS "http://$addr/v1/health" >/dev/null 2>&1; then
		break
	fi
	sleep 0.05 # the poll's interval
done
out=$(ENGRAM_URL="http://$addr" examples/http/quickstart.sh)
grep -q '"ids"' <<<"$out" || fail "POST /v1/turns: $out"
grep -q "PostgreSQL 16" <<<"$out" || fail "recall did not find the decision: $out"
log "all examples passed"
