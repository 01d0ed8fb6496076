#!/usr/bin/env bash
# scripts/postgres.sh: a throwaway PostgreSQL cluster for engram's tests and CI.
#
# Usage:
#   scripts/postgres.sh install        install Debian's PostgreSQL server when initdb is missing (apt-get)
#   scripts/postgres.sh start PORT     start the cluster of PORT on 127.0.0.1:PORT (made, with database engram, if new)
#   scripts/postgres.sh kill PORT      stop it at once (pg_ctl -m immediate, as a crash would); start brings it back
#   scripts/postgres.sh stop [PORT]    stop the cluster of PORT and delete it (every cluster this script made, if no PORT)
#   scripts/postgres.sh status [PORT]  exit 0 if the cluster of PORT (or any) is up, 1 if not
#   scripts/postgres.sh up PORT        install + start, then print ENGRAM_TEST_POSTGRES_URL=postgres://...
#
# Output contract: `up` prints exactly one line on stdout,
# ENGRAM_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:PORT/engram?sslmode=disable, so that a caller can
# `export "$(scripts/postgres.sh up 5433)"`; `start` prints the bare URL. Everything else goes to stderr.
# Non-zero exit on any failure, with the server log's tail.
#
# The server refuses to run as root. As root, the cluster lives in a temporary folder owned by the postgres
# user and every server command runs as that user (runuser); as anyone else, it runs as the caller. The
# cluster listens on 127.0.0.1 only, with its socket in its folder, and trusts every local connection: it is
# for tests only, never for data. The folder's path is kept in
# ${ENGRAM_TEST_CACHE:-$HOME/.cache/engram-test}/run/postgres-PORT.dir; stop removes both.
set -euo pipefail

CACHE="${ENGRAM_TEST_CACHE:-$HOME/.cache/engram-test}"
RUN="$CACHE/run"

NAME=postgres.sh
USAGE='2,10p'
URL_VAR=ENGRAM_TEST_POSTGRES_URL
EXAMPLE_PORT=5433
# shellcheck source=scripts/testserver.sh
source "$(dirname "${BASH_SOURCE[0]}")/testserver.sh"


# bindir prints the bin directory of the newest server Debian installed, or else of the initdb on PATH
# (Homebrew's, say).
bindir() {
	local d
	d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
	if [[ -z "$d" || ! -x "$d/initdb" ]]; then
		d="$(command -v initdb)" || return 1
		d="$(dirname "$d")"
	fi
	printf '%s' "$d"
}

# as_owner runs a server command as the cluster's owner: postgres when this script runs as root.
as_owner() {
	if [[ $(id -u) -eq 0 ]]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

cmd_install() {
	if bindir >/dev/null; then
		return 0
	fi
	[[ $(id -u) -eq 0 ]] || die "PostgreSQL is not installed and only root can install it: apt-get install postgresql postgresql-contrib"
	command -v apt-get >/dev/null || die "PostgreSQL is not installed and there is no apt-get here; install its server"
	log "installing PostgreSQL (apt-get)"
	apt-get update >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql postgresql-contrib >&2
	bindir >/dev/null || die "apt-get installed PostgreSQL but no initdb is under /usr/lib/postgresql/*/bin"
}

pointer() { printf '%s/postgres-%s.dir' "$RUN" "$1"; }

# dir_of PORT prints the folder of the cluster of PORT, if there is one.
dir_of() {
	local p d
	p="$(pointer "$1")"
	[[ -f "$p" ]] || return 1
	d="$(cat "$p")"
	[[ -n "$d" && -d "$d/data" ]] || return 1
	printf '%s' "$d"
}

url() { printf 'postgres://postgres@127.0.0.1:%s/engram?sslmode=disable' "$1"; }

running() {
	local bin
	bin="$(bindir)" || return 1
	as_owner "$bin/pg_ctl" -D "$1/data" status >/dev/null 2>&1
}

cmd_start() {
	[[ $# -eq 1 ]] || usage
	local port="$1" bin d
	check_port "$port"
	bin="$(bindir)" || die "PostgreSQL is not installed: run scripts/postgres.sh install"
	if d="$(dir_of "$port")"; then
		if running "$d"; then
			log "already running on port $port ($d)"
			url "$port"
			printf '\n'
			return 0
		fi
	else
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			die "something already listens on port $port; pick another port"
		fi
		mkdir -p "$RUN"
		d="$(mktemp -d "${TMPDIR:-/tmp}/engram-postgres-$port.XXXXXX")"
		chmod 700 "$d"
		if [[ $(id -u) -eq 0 ]]; then
			chown postgres: "$d"
		fi
		printf '%s\n' "$d" >"$(pointer "$port")"
		# -A trust: a throwaway cluster on loopback, for tests only.
		if ! as_owner "$bin/initdb" -D "$d/data" -U postgres -A trust -E UTF8 --no-locale >"$d/initdb.log" 2>&1; then
			tail -n 20 "$d/initdb.log" >&2 || true
			die "initdb failed (log: $d/initdb.log)"
		fi
		touch "$d/new"
	fi
	if ! as_owner "$bin/pg_ctl" -D "$d/data" -w -l "$d/log" \
		-o "-p $port -k $d -c listen_addresses=127.0.0.1" start >&2; then
		tail -n 20 "$d/log" >&2 || true
		die "the server did not start on port $port (log: $d/log)"
	fi
	if [[ -f "$d/new" ]]; then
		as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres engram || die "createdb engram failed"
		rm -f "$d/new"
	fi
	log "started on 127.0.0.1:$port ($d)"
	url "$port"
	printf '\n'
}

cmd_kill() {
	[[ $# -eq 1 ]] || usage
	local d bin
	check_port "$1"
	d="$(dir_of "$1")" || die "no cluster for port $1"
	bin="$(bindir)" || die "PostgreSQL is not installed"
	if running "$d"; then
		as_owner "$bin/pg_ctl" -D "$d/data" -m immediate stop >&2
	fi
	log "killed port $1 (data kept in $d)"
}

stop_port() {
	local port="$1" d bin
	if d="$(dir_of "$port")"; then
		if bin="$(bindir)" && running "$d"; then
			as_owner "$bin/pg_ctl" -D "$d/data" -m fast stop >&2 || true
		fi
		rm -rf "$d"
		log "stopped port $port"
	else
		log "no cluster for port $port"
	fi
	rm -f "$(pointer "$port")"
}

ports() {
	local p
	for p in "$RUN"/postgres-*.dir; do
		[[ -f "$p" ]] || continue
		p="${p##*/postgres-}"
		printf '%s\n' "${p%.dir}"
	done
}

# describe prints the folder of the cluster of PORT and succeeds when it runs.
describe() {
	local d
	d="$(dir_of "$1")" && running "$d" && printf '%s' "$d"
}

[[ $# -ge 1 ]] || usage
cmd="$1"
shift
case "$cmd" in
install) [[ $# -eq 0 ]] || usage; cmd_install ;;
start) cmd_start "$@" ;;
kill) cmd_kill "$@" ;;
stop) cmd_stop "$@" ;;
status) cmd_status "$@" ;;
up) cmd_up "$@" ;;
-h | --help | help) usage ;;
*) usage ;;
esac
