#!/usr/bin/env bash
# Checks, in seconds and before any build, everything `make test` or
# `make demo` will need, and prints one message listing what is missing and
# how to get it (exit 1), or one line saying what will be used (exit 0).
#
#   scripts/preflight.sh test|demo
#
# It says what the target needs, then checks: Go (the version go.mod asks
# for, no toolchain download), a C compiler when a cgo tool (spire-server)
# still has to be built, flock, for `test` only the Debian packages knot
# and postgresql (knotd and initdb, or the means to install them; `demo`
# installs nothing and needs no root), free disk, the
# operators' published CRDs (internal/testkit/upstreamcrds/pins.tsv: each from
# $ZT_UPSTREAM_CRDS, the tool cache, ../shared/upstream-crds or a download,
# checked against its sha256, as the harness takes them), and whether the
# tools still to be built and the provider's modules can come from the tool
# cache, the module cache or the module proxy.
#
# Environment: ZT_CACHE_DIR (as scripts/tool.sh), ZT_UPSTREAM_CRDS,
# ZT_UPSTREAM_CRDS_BASE_URL, GOPROXY (as go env), CC (as go env),
# ZT_PREFLIGHT_MIN_FREE_GB (default 12 with tools to build, else 3).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd -P)
started=$(date +%s%N)
target=${1:-test}
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false

missing=() # "what: how to get it"
notes=()   # what will be used
miss() { missing+=("$1"); }
note() { notes+=("$1"); }

# probe URL [any]: succeeds when URL answers HTTP 200 or 206 within 5 s (with
# "any", when it answers at all: a proxy that serves only some modules says
# 403 or 404 to a listing, and still serves the pinned ones).
probe() {
	local url=$1 any=${2:-} code
	if command -v curl >/dev/null 2>&1; then
		code=$(curl -sS -o /dev/null -r 0-0 --max-time 5 -w '%{http_code}' "$url" 2>/dev/null)
		[[ $code == 200 || $code == 206 || ($any == any && $code =~ ^[1-5][0-9][0-9]$) ]]
	else
		# No curl: a TCP connection to the host is the best check bash has.
		local hostport=${url#*://}
		hostport=${hostport%%/*}
		local host=${hostport%%:*} port=${hostport##*:}
		[[ $port == "$hostport" ]] && { [[ $url == https* ]] && port=443 || port=80; }
		timeout 5 bash -c "exec 3<>/dev/tcp/$host/$port" 2>/dev/null
	fi
}

# --- Go ---------------------------------------------------------------------
want_go=$(awk '$1 == "go" { print $2; exit }' go.mod)
if ! command -v go >/dev/null 2>&1; then
	miss "Go $want_go or newer: not on PATH. Install it from https://go.dev/dl/ (or your package manager) and put its bin/ on PATH"
	go_ok=0
else
	go_ok=1
	have_go=$(go env GOVERSION 2>/dev/null)
	have_go=${have_go#go}
	if [[ $(printf '%s\n%s\n' "$want_go" "$have_go" | sort -V | head -n1) != "$want_go" ]]; then
		miss "Go $want_go or newer (go.mod): this machine has $have_go, and the builds run with GOTOOLCHAIN=local. Install Go $want_go from https://go.dev/dl/"
		go_ok=0
	fi
fi

# --- the tools still to build, and what building them needs -------------------
to_build=()
needs_cgo=0
if ((go_ok)); then
	while read -r tool flag; do
		[[ -n $tool ]] || continue
		case $target in
		demo) [[ " terraform kube-apiserver etcd spire-server spire-controller-manager spire-agent " == *" $tool "* ]] || continue ;;
		esac
		to_build+=("$tool")
		[[ $flag == cgo ]] && needs_cgo=1
	done < <(scripts/tool.sh missing 2>/dev/null)
fi
if ((needs_cgo)); then
	cc=$(go env CC 2>/dev/null)
	cc=${cc:-gcc}
	if ! command -v "${cc%% *}" >/dev/null 2>&1; then
		miss "a C compiler ('$cc', go env CC): spire-server is built with cgo (its SQLite datastore). Install one: apt-get install gcc"
	fi
fi
if ! command -v flock >/dev/null 2>&1; then
	miss "flock: scripts/tool.sh locks each build with it. Install it: apt-get install util-linux"
fi

# The module proxy serves the tools' modules and the provider's own; a module
# cache that holds the provider's modules and a tool cache that holds every
# tool need no proxy at all.
proxy_needed=0
((${#to_build[@]})) && proxy_needed=1
if ((go_ok)) && ! GOPROXY=off GOFLAGS=-mod=mod timeout 20 go mod download >/dev/null 2>&1; then
	proxy_needed=1
fi
if ((go_ok && proxy_needed)); then
	proxy=$(go env GOPROXY 2>/dev/null)
	first=${proxy%%[,|]*}
	case $first in
	off | "")
		miss "the Go module proxy: GOPROXY is '$proxy', but ${#to_build[@]} tools (${to_build[*]:-none}) and perhaps the provider's modules must be downloaded. Set GOPROXY (default https://proxy.golang.org)"
		;;
	direct)
		note "modules come from their origins (GOPROXY=$proxy)"
		;;
	*)
		if probe "${first%/}/github.com/spiffe/spire/@v/list" any; then
			if ((${#to_build[@]})); then
				note "tools to build: ${to_build[*]}, their modules from $first"
			else
				note "every tool built in the cache, modules the module cache lacks from $first"
			fi
		else
			miss "the Go module proxy $first (GOPROXY=$proxy) did not answer within 5 s, and it must serve the modules of ${to_build[*]:-the provider}. Let this machine reach it, or set GOPROXY to a proxy it can reach"
		fi
		;;
	esac
else
	note "every tool built in the cache, every module in the module cache"
fi

# --- Debian packages --------------------------------------------------------
# Only the DNS tests of `make test` run knotd, and only its workspace tests
# PostgreSQL: the demo needs no package and no root.
case $target in
test) needs="make test needs Go $want_go, a C compiler while spire-server is unbuilt, flock, knotd and PostgreSQL (Debian packages knot, for the DNS tests, and postgresql, for the state backend of the workspace tests: root or sudo once to install them), free disk, the operators' CRDs and, while tools or modules are missing, the module proxy" ;;
demo) needs="make demo needs Go $want_go, a C compiler while spire-server is unbuilt, flock, free disk, the operators' CRDs and, while tools or modules are missing, the module proxy; no root and no Debian package (knot and postgresql are for make test alone)" ;;
*) needs="" ;;
esac
if [[ $target == test ]]; then
	want_pkgs=()
	if ! command -v knotd >/dev/null 2>&1 && [[ ! -x /usr/sbin/knotd ]]; then
		want_pkgs+=("knot bind9-dnsutils")
	fi
	if ! compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; then
		want_pkgs+=(postgresql)
	fi
	if ((${#want_pkgs[@]})); then
		if ! command -v apt-get >/dev/null 2>&1; then
			miss "Debian packages ${want_pkgs[*]} (knotd, the DNS tests' server; initdb and postgres, the workspace tests' state backend): not installed and there is no apt-get. Install Knot DNS and PostgreSQL by hand"
		elif [[ $(id -u) -ne 0 ]] && ! command -v sudo >/dev/null 2>&1; then
			miss "Debian packages ${want_pkgs[*]}: scripts/apt.sh installs them, but needs root or sudo. Run: sudo apt-get install ${want_pkgs[*]}"
		else
			note "${want_pkgs[*]} to be installed by scripts/apt.sh"
		fi
	fi
fi

# --- the operators' published CRDs ------------------------------------------
cache_root=${ZT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/terraform-provider-zerotrust}
shared=$(dirname "$root")/shared/upstream-crds
base=${ZT_UPSTREAM_CRDS_BASE_URL:-https://raw.githubusercontent.com}
base=${base%/}
declare -A crd_from=()
urls=()
while IFS=$'\t' read -r file project commit path sum; do
	[[ -z $file || $file == \#* || $file == file ]] && continue
	found=""
	for cand in ${ZT_UPSTREAM_CRDS:+"$ZT_UPSTREAM_CRDS/$file"} "$cache_root/upstream-crds/${sum:0:12}-$file" "$shared/$file"; do
		[[ -f $cand ]] || continue
		if [[ $(sha256sum "$cand" | cut -d' ' -f1) == "$sum" ]]; then
			found=$cand
		else
			miss "$file: $cand does not match its pinned sha256 $sum (the harness refuses it). Remove it, or put the released file there"
			found=refused
		fi
		break
	done
	if [[ -n $found ]]; then
		[[ $found == refused ]] || crd_from[$(dirname "$found")]=1
	else
		urls+=("$base/$project/$commit/$path")
	fi
done <internal/testkit/upstreamcrds/pins.tsv
if ((${#urls[@]})); then
	# Probed at once: an unreachable host costs 5 s, not 5 s a file.
	dir=$(mktemp -d)
	for i in "${!urls[@]}"; do
		(probe "${urls[$i]}" && touch "$dir/$i") &
	done
	wait
	unreachable=()
	for i in "${!urls[@]}"; do
		[[ -f $dir/$i ]] || unreachable+=("${urls[$i]}")
	done
	rm -rf "$dir"
	if ((${#unreachable[@]})); then
		miss "the operators' published CRDs: ${#unreachable[@]} files are in none of \$ZT_UPSTREAM_CRDS (${ZT_UPSTREAM_CRDS:-not set}), the tool cache ($cache_root/upstream-crds) or $shared, and these URLs did not answer within 5 s:$(printf '\n      %s' "${unreachable[@]}")
    Let this machine reach them, set ZT_UPSTREAM_CRDS_BASE_URL to a server that holds <project>/<commit>/<path>, or put the files (names and sums in internal/testkit/upstreamcrds/pins.tsv) in a directory and set ZT_UPSTREAM_CRDS to it"
	else
		note "${#urls[@]} CRDs to be downloaded from $base"
	fi
fi
((${#crd_from[@]})) && note "CRDs from ${!crd_from[*]}"

# --- free disk --------------------------------------------------------------
min_gb=${ZT_PREFLIGHT_MIN_FREE_GB:-$((${#to_build[@]} ? 12 : 3))}
mkdir -p "$cache_root" 2>/dev/null
for d in "$cache_root" "${TMPDIR:-/tmp}"; do
	free_kb=$(df -Pk "$d" 2>/dev/null | awk 'NR == 2 { print $4 }')
	if [[ -n $free_kb ]] && ((free_kb < min_gb * 1024 * 1024)); then
		miss "free disk: $((free_kb / 1024 / 1024)) GiB free under $d, want at least $min_gb GiB (tool builds, Go caches, cluster data). Free some space, or point ZT_CACHE_DIR or TMPDIR elsewhere"
	fi
done

elapsed=$((($(date +%s%N) - started) / 1000000))
secs=$(printf '%d.%01d' $((elapsed / 1000)) $((elapsed % 1000 / 100)))
if ((${#missing[@]})); then
	{
		echo "preflight ($target): ${#missing[@]} things missing, found in ${secs} s; nothing was built:"
		[[ -z $needs ]] || echo "  ($needs)"
		for m in "${missing[@]}"; do echo "  - $m"; done
	} >&2
	exit 1
fi
echo "preflight ($target): ok in ${secs} s: $(
	IFS=';'
	echo "${notes[*]}"
)" | sed 's/;/; /g'
[[ -z $needs ]] || echo "  ($needs)"
