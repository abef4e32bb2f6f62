#!/usr/bin/env bash
# Install the Debian packages the tests and the demo need, only when missing:
#   knot            the authoritative DNS server of the DNS harness (knotd)
#   bind9-dnsutils  dig and nsupdate, for looking at that server by hand
#
#   scripts/apt.sh          install what is missing (needs root, or sudo)
#
# `apt-get update` runs at most once per call, and only when something has to
# be installed, so a machine that has everything makes no network request.
set -euo pipefail

log() { printf 'apt.sh: %s\n' "$*" >&2; }

missing=()
command -v knotd >/dev/null 2>&1 || [ -x /usr/sbin/knotd ] || missing+=(knot)
command -v dig >/dev/null 2>&1 || missing+=(bind9-dnsutils)
if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
	if ! command -v sudo >/dev/null 2>&1; then
		log "error: need root (or sudo) to install: ${missing[*]}"
		exit 1
	fi
	sudo=(sudo)
fi

log "installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq >&2
# The package's service is not wanted: tests start their own knotd instances.
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
