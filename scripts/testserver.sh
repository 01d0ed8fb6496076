# scripts/testserver.sh: what the scripts that run a server for the tests share (chroma.sh, postgres.sh).
# Sourced, not run. The script sets NAME (its file name), USAGE (the lines of its header that say its
# usage, as a sed range), URL_VAR (the variable `up` prints) and EXAMPLE_PORT, and defines cmd_install,
# cmd_start PORT (prints the server's URL), ports (the ports of the servers it started), stop_port PORT,
# and describe PORT (prints what runs on PORT and succeeds when it is up, fails when not).

log() { printf '%s: %s\n' "$NAME" "$*" >&2; }
die() {
	log "error: $*"
	exit 1
}
usage() {
	sed -n "$USAGE" "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

check_port() {
	if ! [[ "${1:-}" =~ ^[0-9]{1,5}$ ]] || ((10#$1 < 1 || 10#$1 > 65535)); then
		die "PORT must be a number from 1 to 65535, got '${1:-}' (try: scripts/$NAME up $EXAMPLE_PORT)"
	fi
}

cmd_stop() {
	[[ $# -le 1 ]] || usage
	if [[ $# -eq 1 ]]; then
		check_port "$1"
		stop_port "$1"
		return 0
	fi
	local p
	for p in $(ports); do
		stop_port "$p"
	done
}

cmd_status() {
	[[ $# -le 1 ]] || usage
	local p what up=1
	for p in ${1:-$(ports)}; do
		if what="$(describe "$p")"; then
			log "up on 127.0.0.1:$p ($what)"
			up=0
		else
			log "down on port $p"
		fi
	done
	return "$up"
}

cmd_up() {
	[[ $# -eq 1 ]] || usage
	check_port "$1"
	local url
	cmd_install
	url="$(cmd_start "$1")"
	printf '%s=%s\n' "$URL_VAR" "$url"
}
