#!/usr/bin/env bash
# scripts/chromium.sh: a real headless Chromium for the web view's tests.
#
# Usage:
#   scripts/chromium.sh up    install Debian's chromium package when missing (apt), then print the env line
#   scripts/chromium.sh env   print the env line only (fails when chromium is not installed)
#
# `up` and `env` print exactly one line on stdout (progress goes to stderr):
#   ENGRAM_TEST_CHROMIUM=/usr/bin/chromium
# The tests drive it over the DevTools protocol (github.com/chromedp/chromedp); as root it runs with
# --no-sandbox. Installing it takes about 20 s the first time.
set -euo pipefail

log() { printf 'chromium.sh: %s\n' "$*" >&2; }

find_chromium() {
	local c
	for c in chromium chromium-browser; do
		if command -v "$c" >/dev/null 2>&1; then
			command -v "$c"
			return 0
		fi
	done
	return 1
}

cmd_up() {
	if ! find_chromium >/dev/null; then
		local sudo=()
		((EUID == 0)) || sudo=(sudo)
		log "installing chromium (apt)"
		"${sudo[@]}" apt-get update -qq >&2
		DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq chromium >&2
	fi
	cmd_env
}

cmd_env() {
	local bin
	bin=$(find_chromium) || {
		log "chromium is not installed: run scripts/chromium.sh up"
		exit 1
	}
	log "$("$bin" --version 2>/dev/null | head -n 1) at $bin"
	echo "ENGRAM_TEST_CHROMIUM=$bin"
}

case "${1:-}" in
up) cmd_up ;;
env) cmd_env ;;
*)
	sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac
