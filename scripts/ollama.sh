#!/usr/bin/env bash
# scripts/ollama.sh: a real Ollama server for engram's tests and CI.
#
# No Ollama release or model can be downloaded where engram is built, so this
# builds the ollama server from its Go module (CPU backend) and makes its own
# tiny models (scripts/mkmodel). Everything is cached outside the repository,
# in ${ENGRAM_TEST_CACHE:-$HOME/.cache/engram-test}, so that a clean clone on
# the same machine reuses it.
#
# Usage:
#   scripts/ollama.sh build               build ollama into $CACHE/bin/ollama (skipped when cached)
#   scripts/ollama.sh start PORT [PIDFILE] serve on 127.0.0.1:PORT in the background
#   scripts/ollama.sh model PORT          create the test models on the server at PORT
#   scripts/ollama.sh up PORT [PIDFILE]   build, start and model, then print the env lines
#   scripts/ollama.sh env PORT            print the env lines only
#   scripts/ollama.sh stop [PIDFILE]      stop the server (SIGTERM, then SIGKILL)
#
# `up` and `env` print exactly these lines on stdout (all progress goes to
# stderr), for `vars=$(scripts/ollama.sh up 11435) && export $vars` (a bare
# `export $(...)` would hide a failure):
#   OLLAMA_HOST=127.0.0.1:PORT
#   ENGRAM_TEST_OLLAMA_HOST=127.0.0.1:PORT
#   ENGRAM_TEST_OLLAMA_MODEL=engram-test-embed
#   ENGRAM_TEST_OLLAMA_CHAT_MODEL=engram-test-chat
#
# PIDFILE defaults to $CACHE/ollama.pid; the server's log is $CACHE/ollama-PORT.log.
# Every step is idempotent: `up` on a running server with current models only
# checks them.
set -euo pipefail

readonly OLLAMA_VERSION=0.17.4
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly ROOT
readonly CACHE=${ENGRAM_TEST_CACHE:-$HOME/.cache/engram-test}
readonly BIN=$CACHE/bin/ollama
readonly OLLAMA_HOME=$CACHE/ollama-home # the server writes $HOME/.ollama/id_ed25519
readonly MODELS=$CACHE/ollama-models
readonly DEFAULT_PIDFILE=$CACHE/ollama.pid
readonly EMBED_MODEL=engram-test-embed
readonly CHAT_MODEL=engram-test-chat

log() { printf 'ollama.sh: %s\n' "$*" >&2; }
die() {
	log "$*"
	exit 1
}

usage() {
	sed -n '/^# Usage:/,/^# PIDFILE/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

check_port() {
	if ! [[ ${1:-} =~ ^[0-9]+$ ]] || ((${1} < 1 || ${1} > 65535)); then
		die "PORT must be a number from 1 to 65535, got '${1:-}'"
	fi
}

# lock serializes builds and model creation between concurrent callers that
# share the cache; unlock (or the script's exit) releases it. The server must
# not inherit fd 9, or it would hold the lock for its whole life.
lock() {
	mkdir -p "$CACHE"
	exec 9>"$CACHE/.lock"
	flock 9
}
unlock() { exec 9>&-; }

# apt_install installs the Debian packages that are missing.
apt_install() {
	local missing=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	((${#missing[@]} == 0)) && return 0
	local sudo=()
	((EUID == 0)) || sudo=(sudo)
	log "installing ${missing[*]} (apt)"
	"${sudo[@]}" apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >&2
}

# version_ok says whether the cached binary is the wanted version. The client
# asks a server for its version first: point it at a port nothing serves.
version_ok() {
	[[ -x $BIN ]] && OLLAMA_HOST=127.0.0.1:9 "$BIN" -v 2>&1 | grep -qF "$OLLAMA_VERSION"
}

cmd_build() {
	if version_ok; then
		log "ollama $OLLAMA_VERSION is cached at $BIN"
		return 0
	fi
	lock
	if version_ok; then # built by a concurrent caller while we waited
		unlock
		return 0
	fi
	# The module zip drops llama.cpp's vendored headers: Debian has two of them,
	# testdata/ollama/include has a stub for the third (miniaudio.h).
	apt_install nlohmann-json3-dev libstb-dev
	log "building ollama $OLLAMA_VERSION (cold: 3 to 7 minutes on 2 cores, 1 GB of RAM; GOCACHE makes rebuilds take seconds)"
	rm -rf "$CACHE"/build.* # left by an interrupted build
	local tmp
	tmp=$(mktemp -d "$CACHE/build.XXXXXX")
	# go install pkg@version ignores engram's go.mod; GOTOOLCHAIN=local never
	# downloads a toolchain.
	if ! (cd "$tmp" && GOTOOLCHAIN=local GOBIN=$tmp CGO_ENABLED=1 \
		CGO_CPPFLAGS="-I$ROOT/testdata/ollama/include" \
		go install -ldflags "-s -w -X=github.com/ollama/ollama/version.Version=$OLLAMA_VERSION" \
		"github.com/ollama/ollama@v$OLLAMA_VERSION" >&2); then
		rm -rf "$tmp"
		die "building ollama failed"
	fi
	mkdir -p "$(dirname "$BIN")"
	mv -f "$tmp/ollama" "$BIN"
	rm -rf "$tmp"
	version_ok || die "$BIN does not report version $OLLAMA_VERSION"
	unlock
	log "built $BIN"
}

# ollama runs the ollama client against the server at port $1.
ollama() {
	local port=$1
	shift
	HOME=$OLLAMA_HOME OLLAMA_HOST=127.0.0.1:$port "$BIN" "$@"
}

answers() { curl -fsS -m 2 "http://127.0.0.1:$1/api/version" >/dev/null 2>&1; }

# ours says whether pid $1 is an ollama server (and not a reused pid).
ours() {
	local cmd
	cmd=$(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null) || return 1
	[[ $cmd == *ollama*serve* ]]
}

cmd_start() {
	local port=${1:-} pidfile=${2:-$DEFAULT_PIDFILE}
	check_port "$port"
	version_ok || die "no ollama $OLLAMA_VERSION at $BIN: run scripts/ollama.sh build"
	command -v curl >/dev/null || apt_install curl
	if [[ -s $pidfile ]] && ours "$(<"$pidfile")" && answers "$port"; then
		log "already serving on 127.0.0.1:$port (pid $(<"$pidfile"))"
		return 0
	fi
	if answers "$port"; then
		die "something else already answers on 127.0.0.1:$port: pick another port"
	fi
	mkdir -p "$OLLAMA_HOME" "$MODELS" "$(dirname "$pidfile")"
	local logf=$CACHE/ollama-$port.log
	HOME=$OLLAMA_HOME OLLAMA_HOST=127.0.0.1:$port OLLAMA_MODELS=$MODELS \
		nohup "$BIN" serve </dev/null >"$logf" 2>&1 9>&- &
	local pid=$!
	echo "$pid" >"$pidfile"
	local i
	for ((i = 0; i < 300; i++)); do # 30 s
		if answers "$port"; then
			log "serving on 127.0.0.1:$port (pid $pid, log $logf)"
			return 0
		fi
		kill -0 "$pid" 2>/dev/null || {
			tail -n 20 "$logf" >&2
			rm -f "$pidfile"
			die "ollama serve exited; log: $logf"
		}
		sleep 0.1
	done
	kill "$pid" 2>/dev/null || true
	rm -f "$pidfile"
	die "ollama serve did not answer on 127.0.0.1:$port within 30 s; log: $logf"
}

cmd_stop() {
	local pidfile=${1:-$DEFAULT_PIDFILE}
	if [[ ! -s $pidfile ]]; then
		log "not running (no $pidfile)"
		return 0
	fi
	local pid
	pid=$(<"$pidfile")
	if ! ours "$pid"; then
		log "not running (pid $pid is gone or is not ollama)"
		rm -f "$pidfile"
		return 0
	fi
	kill -TERM "$pid"
	local i
	for ((i = 0; i < 100; i++)); do # 10 s
		ours "$pid" || break
		sleep 0.1
	done
	if ours "$pid"; then
		log "pid $pid ignored SIGTERM: sending SIGKILL"
		kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$pidfile"
	log "stopped (pid $pid)"
}

# generator_hash identifies the model generator's source: a model is made
# again when it changes.
generator_hash() {
	(cd "$ROOT/scripts/mkmodel" && find . -maxdepth 1 -type f ! -name '*_test.go' | LC_ALL=C sort | xargs cat | sha256sum | cut -c1-16)
}

# ensure_model NAME KIND PORT creates model NAME (mkmodel -kind KIND) on the
# server at PORT, unless the server has it from the current generator.
ensure_model() {
	local name=$1 kind=$2 port=$3
	local dir=$CACHE/models/$name stamp hash models
	hash=$(generator_hash)
	stamp=$(cat "$dir.stamp" 2>/dev/null || true)
	models=$(ollama "$port" list | awk 'NR > 1 {print $1}')
	if [[ $stamp == "$hash" ]] && grep -qx "$name:latest" <<<"$models"; then
		log "model $name is current"
		return 0
	fi
	log "creating model $name"
	rm -rf "$dir"
	mkdir -p "$dir"
	(cd "$ROOT" && go run ./scripts/mkmodel -kind "$kind" -out "$dir" -modelfile "$dir.Modelfile")
	# create draws progress bars with terminal escapes: keep them out of logs.
	if ! ollama "$port" create "$name" -f "$dir.Modelfile" >"$dir.create.log" 2>&1; then
		tr -d '\r' <"$dir.create.log" | tail -n 5 >&2
		die "ollama create $name failed; log: $dir.create.log"
	fi
	echo "$hash" >"$dir.stamp"
}

cmd_model() {
	local port=${1:-}
	check_port "$port"
	answers "$port" || die "no ollama server answers on 127.0.0.1:$port: run scripts/ollama.sh start $port"
	lock
	ensure_model "$EMBED_MODEL" embed "$port"
	ensure_model "$CHAT_MODEL" chat "$port"
	unlock
}

cmd_env() {
	local port=${1:-}
	check_port "$port"
	printf '%s\n' \
		"OLLAMA_HOST=127.0.0.1:$port" \
		"ENGRAM_TEST_OLLAMA_HOST=127.0.0.1:$port" \
		"ENGRAM_TEST_OLLAMA_MODEL=$EMBED_MODEL" \
		"ENGRAM_TEST_OLLAMA_CHAT_MODEL=$CHAT_MODEL"
}

cmd_up() {
	local port=${1:-}
	check_port "$port"
	cmd_build
	cmd_start "$port" "${2:-$DEFAULT_PIDFILE}"
	cmd_model "$port"
	cmd_env "$port"
}

case ${1:-} in
build) cmd_build ;;
start) cmd_start "${@:2}" ;;
stop) cmd_stop "${@:2}" ;;
model) cmd_model "${@:2}" ;;
env) cmd_env "${@:2}" ;;
up) cmd_up "${@:2}" ;;
*) usage ;;
esac
