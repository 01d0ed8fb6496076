#!/usr/bin/env bash
# examples/claude-code/hook.sh: what Claude Code's hooks do with engram, by hand.
#
# Usage: examples/claude-code/hook.sh [ENGRAM] (default: engram on the PATH; pass
# "engram --home DIR" to use another home). `engram integrate claude-code` installs
# the same command as a hook; here a two-line transcript stands in for a session:
# the Stop event archives it, and a later UserPromptSubmit prints the memory the
# model would be given.
set -euo pipefail
engram=(${1:-engram})
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
t="$dir/session.jsonl"
cat > "$t" <<'JSONL'
{"type":"user","uuid":"e0000000-0000-4000-8000-000000000001","sessionId":"example-1","cwd":"/home/dev/billing-api","timestamp":"2026-05-01T09:00:00Z","message":{"role":"user","content":"Deploys to staging go through scripts/deploy.sh with --canary."}}
{"type":"assistant","uuid":"e0000000-0000-4000-8000-000000000002","sessionId":"example-1","cwd":"/home/dev/billing-api","timestamp":"2026-05-01T09:00:05Z","message":{"role":"assistant","content":[{"type":"text","text":"Noted: staging deploys use scripts/deploy.sh --canary."}]}}
JSONL
printf '{"session_id":"example-1","transcript_path":"%s","cwd":"/home/dev/billing-api","hook_event_name":"Stop"}' "$t" |
	"${engram[@]}" hook claude-code
# A new session in the same project asks; the hook prints the packed memory.
: > "$dir/new.jsonl"
printf '{"session_id":"example-2","transcript_path":"%s","cwd":"/home/dev/billing-api","hook_event_name":"UserPromptSubmit","prompt":"how do we deploy to staging?"}' "$dir/new.jsonl" |
	"${engram[@]}" hook claude-code
