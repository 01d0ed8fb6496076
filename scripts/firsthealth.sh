#!/usr/bin/env bash
# scripts/firsthealth.sh: how long `engram serve` takes to answer /v1/health.
#
# Usage:
#   scripts/firsthealth.sh BINARY HOME PORT [wait]
#
# Starts BINARY --home HOME serve on 127.0.0.1:PORT, polls GET /v1/health every
# 10 ms and prints the seconds from the start to the first 200; with "wait",
# also the seconds until health's indexes.vectors is ready (at most 60 s).
# Then stops the server. HOME is a home no other engram serves, e.g. the one
# `engram bench scale --turns 100000 --keep HOME` leaves.
set -euo pipefail
bin=$1 home=$2 port=$3 wait=${4:-}
url=http://127.0.0.1:$port/v1/health
start=$(date +%s.%N)
ENGRAM_ADDR=127.0.0.1:$port "$bin" --home "$home" serve >/dev/null 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
until [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "$url")" = 200 ]; do
	kill -0 $pid 2>/dev/null || { echo "serve exited" >&2; exit 1; }
	sleep 0.01
done
echo "first health after $(echo "$(date +%s.%N) - $start" | bc) s"
if [ -n "$wait" ]; then
	until curl -s "$url" | grep -q '"vectors":{"state":"ready"'; do
		[ "$(echo "$(date +%s.%N) - $start > 60" | bc)" = 1 ] && { echo "vectors not ready after 60 s" >&2; exit 1; }
		sleep 0.05
	done
	echo "vectors ready after $(echo "$(date +%s.%N) - $start" | bc) s"
fi
