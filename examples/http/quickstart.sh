#!/usr/bin/env bash
# examples/http/quickstart.sh: engram over plain HTTP with curl.
#
# Usage: ENGRAM_URL=http://127.0.0.1:30001 examples/http/quickstart.sh
# (ENGRAM_TOKEN is sent as a bearer token when set.) Remembers two turns of a
# session, then recalls the decision and prints the packed context.
set -euo pipefail
url=${ENGRAM_URL:-http://127.0.0.1:30001}
auth=()
[[ -n "${ENGRAM_TOKEN:-}" ]] && auth=(-H "Authorization: Bearer $ENGRAM_TOKEN")

curl -fsS "${auth[@]}" "$url/v1/turns" --json '{"turns":[
  {"id":"example-http-1","session":"billing","speaker":"Ana","content":"Which database should billing use?"},
  {"id":"example-http-2","session":"billing","speaker":"Ben","content":"We decided on PostgreSQL 16 for billing, for its JSONB support."}]}'
echo
curl -fsS "${auth[@]}" "$url/v1/recall" --json '{"query":"which database did we pick for billing?","k":3,"budget_tokens":300}'
echo
