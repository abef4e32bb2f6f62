#!/usr/bin/env bash
# Install the Debian packages the tests need, when missing (the demo needs
# none: it runs no DNS server, so `make demo` does not call this script):
#   knot            the authoritative DNS server of the DNS harness (knotd)
#   bind9-dnsutils  dig and nsupdate, for looking at that server by hand
#
#   scripts/apt.sh          install them unless knotd is already there
#                           (needs root, or sudo)
#
# A machine that has knotd makes no network request; otherwise `apt-get
# update` runs once, then one `apt-get install`.
set -euo pipefail

log() { printf 'apt.sh: %s\n' "$*" >&2; }

if command -v knotd >/dev/null 2>&1 || [ -x /usr/sbin/knotd ]; then
	exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
	if ! command -v sudo >/dev/null 2>&1; then
		log "error: need root (or sudo) to install knot and bind9-dnsutils"
		exit 1
	fi
	sudo=(sudo)
fi

log "installing knot bind9-dnsutils"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq >&2
# The package's own service is not used: tests start their own knotd instances.
"${sudo[@]}" apt-get install -y -qq --no-install-recommends knot bind9-dnsutils >&2
