#!/usr/bin/env bash
# Install the Debian packages the tests need, when missing (the demo needs
# none: it runs no DNS server and no database, so `make demo` does not call
# this script):
#   knot            the authoritative DNS server of the DNS harness (knotd)
#   bind9-dnsutils  dig and nsupdate, for looking at that server by hand
#   postgresql      the PostgreSQL server (initdb, postgres, psql) that holds
#                   the Terraform state of the workspace-per-cluster tests
#                   (Terraform's pg backend)
#
#   scripts/apt.sh          install those whose program is missing
#                           (needs root, or sudo)
#
# A machine that has knotd and initdb makes no network request; otherwise
# `apt-get update` runs once, then one `apt-get install`.
set -euo pipefail

log() { printf 'apt.sh: %s\n' "$*" >&2; }

packages=()
if ! command -v knotd >/dev/null 2>&1 && [ ! -x /usr/sbin/knotd ]; then
	packages+=(knot bind9-dnsutils)
fi
# Debian keeps the server's programs under /usr/lib/postgresql/<major>/bin,
# off PATH (internal/testkit/harness/postgres.go looks there).
if ! compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; then
	packages+=(postgresql)
fi
if [ ${#packages[@]} -eq 0 ]; then
	exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
	if ! command -v sudo >/dev/null 2>&1; then
		log "error: need root (or sudo) to install ${packages[*]}"
		exit 1
	fi
	sudo=(sudo)
fi

log "installing ${packages[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq >&2
# The packages' own services are not used: tests start their own knotd and
# postgres instances, as an unprivileged user, in temporary directories.
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${packages[@]}" >&2
