#!/usr/bin/env bash
# scripts/chroma.sh: a real ChromaDB server for engram's tests and CI.
#
# Usage:
#   scripts/chroma.sh install            install the server (npm ci) into the cache; no-op when current
#   scripts/chroma.sh start PORT [DATA]  start a server on 127.0.0.1:PORT and wait until it answers
#   scripts/chroma.sh stop [PORT]        stop the server on PORT (every server this script started, if no PORT)
#   scripts/chroma.sh status [PORT]      exit 0 if the server on PORT (or any) is up, 1 if not
#   scripts/chroma.sh up PORT            install + start, then print ENGRAM_TEST_CHROMA_URL=http://127.0.0.1:PORT
#
# Output contract: `up` prints exactly one line on stdout, ENGRAM_TEST_CHROMA_URL=http://127.0.0.1:PORT,
# so a caller can `export "$(scripts/chroma.sh up 8765)"`; `start` prints the bare URL. Everything else
# (progress, timings, errors) goes to stderr. Non-zero exit on any failure, with the server log's tail.
#
# Every command is idempotent: `install` skips when the installed lock matches the committed one, `start` on
# a port whose server is already up says so and succeeds, `stop` on a stopped port succeeds.
#
# The cache lives outside the repository so that CI's clean clones reuse it:
#   ${ENGRAM_TEST_CACHE:-$HOME/.cache/engram-test}/chroma          node_modules (about 420 MB)
#   ${ENGRAM_TEST_CACHE:-$HOME/.cache/engram-test}/run/PORT/       config.yaml, server.pid, server.log, data/
# Without DATA, start uses run/PORT/data and empties it first (a fresh server per run); stop removes it again.
# With DATA, the directory is kept as it is.
#
# The server is the Rust binary inside the npm package chromadb-js-bindings-linux-x64-gnu, pinned to 1.0.5
# by scripts/chroma/package.json because newer builds need glibc 2.38. It runs with allow_reset: true, so
# tests may POST /api/v2/reset. It listens on 127.0.0.1 only.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SPEC="$ROOT/scripts/chroma"
CACHE="${ENGRAM_TEST_CACHE:-$HOME/.cache/engram-test}"
INSTALL="$CACHE/chroma"
CLI="$INSTALL/node_modules/chromadb/dist/cli.mjs"
BINDING="chromadb-js-bindings-linux-x64-gnu"
STAMP="$INSTALL/.engram-lock.sha256"
READY_TIMEOUT="${ENGRAM_CHROMA_READY_TIMEOUT:-30}" # seconds to wait for the first heartbeat
STOP_TIMEOUT=5                                      # seconds between SIGINT and SIGKILL

NAME=chroma.sh
USAGE='2,9p'
URL_VAR=ENGRAM_TEST_CHROMA_URL
EXAMPLE_PORT=8765
# shellcheck source=scripts/testserver.sh
source "$(dirname "${BASH_SOURCE[0]}")/testserver.sh"

# now_ms prints the wall clock in milliseconds (bash 5's EPOCHREALTIME; whole seconds on older shells).
now_ms() {
	if [[ -n "${EPOCHREALTIME:-}" ]]; then
		local t="${EPOCHREALTIME//[.,]/}"
		printf '%s' "$((t / 1000))"
	else
		printf '%s000' "$(date +%s)"
	fi
}

heartbeat() { curl -fsS --max-time 1 "http://127.0.0.1:$1/api/v2/heartbeat" >/dev/null 2>&1; }

lock_sum() {
	if command -v sha256sum >/dev/null; then
		cat "$SPEC/package.json" "$SPEC/package-lock.json" | sha256sum | cut -d' ' -f1
	else
		cat "$SPEC/package.json" "$SPEC/package-lock.json" | shasum -a 256 | cut -d' ' -f1
	fi
}

installed() {
	[[ -f "$CLI" && -f "$STAMP" && "$(cat "$STAMP")" == "$(lock_sum)" ]]
}

cmd_install() {
	command -v node >/dev/null || die "node not found (Node 20 or newer is needed)"
	command -v npm >/dev/null || die "npm not found"
	[[ -f "$SPEC/package-lock.json" ]] || die "$SPEC/package-lock.json is missing"
	mkdir -p "$CACHE"
	# One installer at a time: CI jobs on one machine share the cache (flock is missing on macOS; there
	# the lock is skipped).
	exec 9>"$CACHE/chroma.install.lock"
	if command -v flock >/dev/null; then
		flock 9
	fi
	if installed; then
		log "installed ($INSTALL)"
		exec 9>&-
		return 0
	fi
	local t0 tmp
	t0=$(now_ms)
	tmp="$CACHE/chroma.tmp.$$"
	rm -rf "$tmp"
	mkdir -p "$tmp"
	cp "$SPEC/package.json" "$SPEC/package-lock.json" "$tmp/"
	log "installing ChromaDB into $INSTALL (npm ci, about 420 MB)"
	if ! (cd "$tmp" && npm ci --no-audit --no-fund --loglevel=error >&2); then
		rm -rf "$tmp"
		die "npm ci failed in $tmp"
	fi
	# Fail here, not at start, when the native server cannot load (the glibc 2.38 trap).
	if ! (cd "$tmp" && node -e "require('$BINDING')" >&2); then
		rm -rf "$tmp"
		die "the ChromaDB native module does not load on this machine (see the error above)"
	fi
	lock_sum >"$tmp/.engram-lock.sha256"
	rm -rf "$INSTALL"
	mv "$tmp" "$INSTALL"
	log "installed in $(($(now_ms) - t0)) ms"
	exec 9>&-
}

rundir() { printf '%s/run/%s' "$CACHE" "$1"; }

# pid_of PORT prints the pid of the server this script started on PORT, if it still runs.
pid_of() {
	local pidfile pid
	pidfile="$(rundir "$1")/server.pid"
	[[ -f "$pidfile" ]] || return 1
	pid="$(cat "$pidfile")"
	[[ "$pid" =~ ^[0-9]+$ ]] || return 1
	# Guard against pid reuse: the process must be our server with our config.
	if ps -o command= -p "$pid" 2>/dev/null | grep -qF "$(rundir "$1")/config.yaml"; then
		printf '%s' "$pid"
		return 0
	fi
	return 1
}

cmd_start() {
	[[ $# -ge 1 && $# -le 2 ]] || usage
	local port="$1" data="${2:-}" dir pid t0 scratch=0
	check_port "$port"
	[[ -f "$CLI" ]] || die "ChromaDB is not installed in $INSTALL: run scripts/chroma.sh install"
	dir="$(rundir "$port")"
	if pid="$(pid_of "$port")"; then
		if [[ -n "$data" ]] && ! grep -qF "persist_path: \"$(cd "$data" 2>/dev/null && pwd)\"" "$dir/config.yaml"; then
			die "port $port already serves another data directory; run scripts/chroma.sh stop $port first"
		fi
		if heartbeat "$port"; then
			log "already running on port $port (pid $pid)"
			printf 'http://127.0.0.1:%s\n' "$port"
			return 0
		fi
		die "pid $pid holds port $port but does not answer; run scripts/chroma.sh stop $port"
	fi
	if heartbeat "$port"; then
		die "something else already serves Chroma on port $port; pick another port"
	fi
	if [[ -z "$data" ]]; then
		data="$dir/data"
		scratch=1
		rm -rf "$data"
	fi
	mkdir -p "$dir" "$data"
	data="$(cd "$data" && pwd)"
	rm -f "$dir/server.pid"
	cat >"$dir/config.yaml" <<-EOF
		# written by scripts/chroma.sh start
		port: $port
		listen_address: "127.0.0.1"
		persist_path: "$data"
		allow_reset: true
	EOF
	printf '%s\n' "$scratch" >"$dir/scratch"
	t0=$(now_ms)
	# node directly (not npx) so that $! is the server. setsid (where there is one) keeps a Ctrl-C in the
	# caller's terminal from reaching it; every descriptor is redirected so that $(scripts/chroma.sh up PORT)
	# returns at once.
	local detach=()
	if command -v setsid >/dev/null; then
		detach=(setsid)
	fi
	${detach[@]+"${detach[@]}"} node "$CLI" run "$dir/config.yaml" </dev/null >"$dir/server.log" 2>&1 9>&- &
	pid=$!
	printf '%s\n' "$pid" >"$dir/server.pid"
	local tries=$((READY_TIMEOUT * 20))
	until heartbeat "$port"; do
		if ! kill -0 "$pid" 2>/dev/null; then
			rm -f "$dir/server.pid"
			tail -n 20 "$dir/server.log" >&2 || true
			die "the server exited before answering on port $port (log: $dir/server.log)"
		fi
		if (((tries -= 1) < 0)); then
			tail -n 20 "$dir/server.log" >&2 || true
			kill -KILL "$pid" 2>/dev/null || true
			rm -f "$dir/server.pid"
			die "no heartbeat on port $port after ${READY_TIMEOUT}s (log: $dir/server.log)"
		fi
		sleep 0.05
	done
	log "started on 127.0.0.1:$port (pid $pid, data $data) in $(($(now_ms) - t0)) ms"
	printf 'http://127.0.0.1:%s\n' "$port"
}

stop_port() {
	local port="$1" dir pid i
	dir="$(rundir "$port")"
	if pid="$(pid_of "$port")"; then
		kill -INT "$pid" 2>/dev/null || true
		for ((i = 0; i < STOP_TIMEOUT * 20; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.05
		done
		if kill -0 "$pid" 2>/dev/null; then
			log "pid $pid ignored SIGINT for ${STOP_TIMEOUT}s; sending SIGKILL"
			kill -KILL "$pid" 2>/dev/null || true
		fi
		log "stopped port $port (pid $pid)"
	else
		log "not running on port $port"
	fi
	rm -f "$dir/server.pid"
	if [[ -f "$dir/scratch" && "$(cat "$dir/scratch")" == 1 ]]; then
		rm -rf "$dir/data"
	fi
}

ports() {
	local d
	for d in "$CACHE"/run/*/; do
		[[ -d "$d" ]] && basename "$d"
	done
	return 0
}

# describe prints the pid of the server on PORT and succeeds when it answers.
describe() {
	local pid
	pid="$(pid_of "$1")" && heartbeat "$1" && printf 'pid %s' "$pid"
}

[[ $# -ge 1 ]] || usage
cmd="$1"
shift
case "$cmd" in
install) [[ $# -eq 0 ]] || usage; cmd_install ;;
start) cmd_start "$@" ;;
stop) cmd_stop "$@" ;;
status) cmd_status "$@" ;;
up) cmd_up "$@" ;;
-h | --help | help) usage ;;
*) usage ;;
esac
