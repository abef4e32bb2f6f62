#!/usr/bin/env bash
# Build a pinned third-party tool into a per-machine cache outside the clone
# and print the absolute path of its binary.
#
#   scripts/tool.sh NAME   build NAME on first use, print its path on stdout
#   scripts/tool.sh all    build every tool the tests use (CI warm-up), print each path
#   scripts/tool.sh list   print the known tool names
#   scripts/tool.sh missing print the tools of "all" not built yet (builds nothing)
#
# The peer providers in BENCH_TOOLS and goreleaser in RELEASE_TOOLS are known
# by name but left out of "all": only bench/ (make bench) and make
# release-dry-run use them, so make test never waits for them.
#
# Each tool is pinned by a wrapper module in tools/NAME (go.mod, go.sum and a
# tools.go that blank-imports the tool's main package). Binaries land in
#
#   $ZT_CACHE_DIR/tools/NAME-VERSION-HASH/NAME
#
# where ZT_CACHE_DIR defaults to ${XDG_CACHE_HOME:-$HOME/.cache}/terraform-provider-zerotrust
# and HASH covers the wrapper files, the build recipe below and the Go
# toolchain. A changed pin therefore builds a new binary; an unchanged one is
# reused by any clone of the repo on the same machine.
#
# Only paths go to stdout; all logs go to stderr.
#
# Environment:
#   ZT_CACHE_DIR               cache root (see above)
#   ZT_FORCE_BUILD_TERRAFORM=1 build terraform (and terraform-1.11) even if the
#                              pinned version is on PATH
#
# terraform is the newest release the module proxy serves (the tests' default);
# terraform-1.11 the oldest release the tests still cover. A terraform on PATH
# is used instead of a build only when it reports the pinned version.
# terraform-exp is the same pin (tools/terraform) built as a dev version with
# experiments allowed, which release builds forbid: only such a build accepts
# 'plan -allow-deferral' (deferred actions). It is never taken from PATH.
# spire-agent has a wrapper of its own (the agent needs modules the server
# does not) that must pin the spire version tools/spire-server pins.
#
# Note: callers that run with a temporary HOME (tests do) should resolve tool
# paths before changing HOME, or set ZT_CACHE_DIR, or they get a cold cache.
set -euo pipefail

readonly ALL_TOOLS=(etcd kube-apiserver spire-controller-manager spire-server spire-agent golangci-lint tfplugindocs terraform terraform-1.11 terraform-exp tofu)
readonly BENCH_TOOLS=(terraform-provider-kubernetes terraform-provider-kubectl)
readonly RELEASE_TOOLS=(goreleaser)

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
repo_root=$(cd "$script_dir/.." && pwd -P)
tools_src=$repo_root/tools

log() { printf 'tool.sh: %s\n' "$*" >&2; }

# fail TOOL STEP MESSAGE...
fail() {
	local tool=$1 step=$2
	shift 2
	printf 'tool.sh: error: %s: %s failed: %s\n' "$tool" "$step" "$*" >&2
	exit 1
}

usage() {
	cat >&2 <<EOF
usage: scripts/tool.sh NAME|all|list|missing
tools: ${ALL_TOOLS[*]}
bench-only tools (not in "all"): ${BENCH_TOOLS[*]}
release-only tools (not in "all"): ${RELEASE_TOOLS[*]}
EOF
}

cache_root() {
	local root
	if [[ -n ${ZT_CACHE_DIR:-} ]]; then
		root=$ZT_CACHE_DIR
	elif [[ -n ${XDG_CACHE_HOME:-} ]]; then
		root=$XDG_CACHE_HOME/terraform-provider-zerotrust
	elif [[ -n ${HOME:-} ]]; then
		root=$HOME/.cache/terraform-provider-zerotrust
	else
		fail "${1:-tool.sh}" "locating the cache" "none of ZT_CACHE_DIR, XDG_CACHE_HOME, HOME is set"
	fi
	mkdir -p "$root/tools" || fail "${1:-tool.sh}" "creating the cache" "cannot create $root/tools"
	(cd "$root" && pwd -P)
}

# module_version GOMOD MODULE: the version MODULE is required at in GOMOD.
module_version() {
	awk -v m="$2" '
		$1 == "require" { $1 = ""; $0 = $0 }
		$1 == m && $2 ~ /^v[0-9]/ { print $2; exit }
	' "$1"
}

# wrapper TOOL: the tools/ directory that pins TOOL. terraform-exp is a
# second build of the terraform pin, so the two cannot drift apart.
wrapper() {
	case $1 in
	terraform-exp) printf 'terraform\n' ;;
	*) printf '%s\n' "$1" ;;
	esac
}

# recipe TOOL: sets main_mod, pkg, cgo and ldflags for TOOL. Versions baked
# into ldflags come from the wrapper's go.mod, so a pin lives in one place.
recipe() {
	local tool=$1 gomod v
	gomod=$tools_src/$(wrapper "$tool")/go.mod
	[[ -f $gomod ]] || fail "$tool" "reading the pin" "$gomod not found (unknown tool? known: ${ALL_TOOLS[*]} ${BENCH_TOOLS[*]} ${RELEASE_TOOLS[*]})"
	cgo=0
	ldflags="-s -w"
	case $tool in
	kube-apiserver)
		main_mod=k8s.io/kubernetes
		pkg=k8s.io/kubernetes/cmd/kube-apiserver
		;;
	etcd)
		main_mod=go.etcd.io/etcd/server/v3
		pkg=go.etcd.io/etcd/server/v3 # package main; etcdmain is the library it calls
		;;
	spire-server)
		main_mod=github.com/spiffe/spire
		pkg=github.com/spiffe/spire/cmd/spire-server
		cgo=1 # sqlite3 datastore
		;;
	spire-agent)
		main_mod=github.com/spiffe/spire
		pkg=github.com/spiffe/spire/cmd/spire-agent
		;;
	spire-controller-manager)
		main_mod=github.com/spiffe/spire-controller-manager
		pkg=github.com/spiffe/spire-controller-manager/cmd
		;;
	terraform | terraform-1.11 | terraform-exp)
		main_mod=github.com/hashicorp/terraform
		pkg=github.com/hashicorp/terraform
		;;
	tofu)
		main_mod=github.com/opentofu/opentofu
		pkg=github.com/opentofu/opentofu/cmd/tofu
		;;
	golangci-lint)
		main_mod=github.com/golangci/golangci-lint/v2
		pkg=github.com/golangci/golangci-lint/v2/cmd/golangci-lint
		;;
	tfplugindocs)
		main_mod=github.com/hashicorp/terraform-plugin-docs
		pkg=github.com/hashicorp/terraform-plugin-docs/cmd/tfplugindocs
		;;
	terraform-provider-kubernetes)
		main_mod=github.com/hashicorp/terraform-provider-kubernetes
		pkg=github.com/hashicorp/terraform-provider-kubernetes
		;;
	terraform-provider-kubectl)
		main_mod=github.com/alekc/terraform-provider-kubectl
		pkg=github.com/alekc/terraform-provider-kubectl
		;;
	goreleaser)
		main_mod=github.com/goreleaser/goreleaser/v2
		pkg=github.com/goreleaser/goreleaser/v2 # package main at the module root
		;;
	*)
		fail "$tool" "reading the pin" "no build recipe in scripts/tool.sh (known: ${ALL_TOOLS[*]} ${BENCH_TOOLS[*]} ${RELEASE_TOOLS[*]})"
		;;
	esac
	version=$(module_version "$gomod" "$main_mod")
	[[ -n $version ]] || fail "$tool" "reading the pin" "$gomod does not require $main_mod"
	v=${version#v}
	if [[ $tool == spire-agent ]]; then
		local server_version
		server_version=$(module_version "$tools_src/spire-server/go.mod" "$main_mod")
		[[ $version == "$server_version" ]] ||
			fail "$tool" "reading the pin" "tools/spire-agent pins spire $version but tools/spire-server pins $server_version; pin both to one version"
	fi
	case $tool in
	kube-apiserver)
		local major=${v%%.*} rest=${v#*.} minor p
		minor=${rest%%.*}
		for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
			ldflags+=" -X $p.gitVersion=$version -X $p.gitMajor=$major -X $p.gitMinor=$minor"
		done
		;;
	spire-server | spire-agent)
		# No leading "v": spire parses this as a semver and panics otherwise.
		ldflags+=" -X github.com/spiffe/spire/pkg/common/version.gittag=$v"
		;;
	terraform | terraform-1.11)
		ldflags+=" -X github.com/hashicorp/terraform/version.dev=no"
		;;
	terraform-exp)
		# main.experimentsAllowed: see experiments.go in the terraform module.
		# Left a dev build (reports v1.16.0-dev): terraform-exec, and so
		# terraform-plugin-testing, passes -allow-deferral only to alpha and
		# dev versions.
		ldflags+=" -X main.experimentsAllowed=yes"
		;;
	tofu)
		ldflags+=" -X github.com/opentofu/opentofu/version.dev=no"
		;;
	golangci-lint)
		# A non-empty date makes golangci-lint report these instead of the
		# wrapper module's "(devel)" version.
		ldflags+=" -X main.version=$v -X main.commit=$version -X main.date=n/a"
		;;
	tfplugindocs)
		ldflags+=" -X github.com/hashicorp/terraform-plugin-docs/cmd/tfplugindocs/build.version=$v"
		;;
	goreleaser)
		# Otherwise 'goreleaser --version' reports the wrapper's "(devel)".
		ldflags+=" -X main.version=$v -X main.builtBy=scripts/tool.sh"
		;;
	esac
}

# go_env: the environment every go command below runs with.
go_env() {
	env -u GOOS -u GOARCH -u GOFLAGS -u GOWORK \
		GOFLAGS=-buildvcs=false GOTOOLCHAIN=local GOWORK=off CGO_ENABLED="$cgo" "$@"
}

# terraform_on_path VERSION: print the terraform on PATH if it reports
# exactly VERSION (for example v1.11.4).
terraform_on_path() {
	local want=$1 tf out
	tf=$(command -v terraform 2>/dev/null) || return 1
	[[ $tf == /* ]] || tf=$PWD/$tf
	out=$(CHECKPOINT_DISABLE=1 timeout 30 "$tf" version 2>/dev/null) || {
		log "terraform: ignoring $tf: 'terraform version' failed"
		return 1
	}
	if [[ $out == "Terraform $want"$'\n'* || $out == "Terraform $want" ]]; then
		printf '%s\n' "$tf"
		return 0
	fi
	return 1
}

# locate TOOL: sets main_mod, pkg, cgo, ldflags, version, src, dir and bin
# for TOOL (bin is where its build lands, built or not), or, for a terraform
# taken from PATH, only bin (and dir empty).
locate() {
	local tool=$1
	recipe "$tool"
	dir=""
	if [[ ($tool == terraform || $tool == terraform-1.11) && ${ZT_FORCE_BUILD_TERRAFORM:-} != 1 ]]; then
		bin=$(terraform_on_path "$version") && return 0
	fi

	local f
	src=$tools_src/$(wrapper "$tool")
	for f in go.mod go.sum tools.go; do
		[[ -f $src/$f ]] || fail "$tool" "reading the pin" "$src/$f not found"
	done

	local key
	if [[ -z ${goversion:-} ]]; then
		goversion=$(go env GOVERSION GOHOSTOS GOHOSTARCH 2>/dev/null | tr '\n' ' ') ||
			fail "$tool" "finding Go" "'go env' failed (is go on PATH?)"
	fi
	key=$(
		{
			printf 'recipe\0%s\0%s\0%s\0%s\0%s\0-trimpath\0%s\0' "$tool" "$main_mod" "$pkg" "$cgo" "$ldflags" "$goversion"
			for f in go.mod go.sum tools.go; do
				printf 'file\0%s\0' "$f"
				cat "$src/$f"
			done
		} | sha256sum | cut -c1-12
	)
	root=$(cache_root "$tool")
	dir=$root/tools/$tool-$version-$key
	bin=$dir/$tool
}

# tool_path TOOL: build TOOL if needed and print its binary's path.
tool_path() {
	local tool=$1
	local main_mod pkg cgo ldflags version src dir bin root
	locate "$tool"
	if [[ -z $dir || -x $bin ]]; then
		printf '%s\n' "$bin"
		return 0
	fi

	mkdir -p "$dir" || fail "$tool" "creating the cache" "cannot create $dir"
	local lock=$root/tools/.$tool.lock lockfd
	exec {lockfd}>"$lock" || fail "$tool" "locking" "cannot open $lock"
	if ! flock -n "$lockfd"; then
		log "$tool: waiting for another build (lock $lock)"
		flock "$lockfd" || fail "$tool" "locking" "flock $lock"
	fi
	if [[ -x $bin ]]; then # built by whoever held the lock
		exec {lockfd}>&-
		printf '%s\n' "$bin"
		return 0
	fi
	rm -f "$dir/.$tool.tmp."* # left by a build that was killed

	if [[ $cgo == 1 ]]; then
		local cc
		cc=$(go_env go env CC)
		command -v "${cc%% *}" >/dev/null 2>&1 ||
			fail "$tool" "checking the C compiler" "cgo is required but '$cc' is not on PATH (apt-get install gcc)"
	fi

	log "$tool: building $main_mod $version (cgo=$cgo) into $dir"
	local start=$SECONDS tmp
	tmp=$(mktemp "$dir/.$tool.tmp.XXXXXX") || fail "$tool" "creating a temp file" "in $dir"
	# shellcheck disable=SC2064 # expand now: these locals are gone when the trap fires
	trap "rm -f '$tmp'" EXIT

	(cd "$src" && go_env go list -mod=readonly -deps "$pkg" >/dev/null) ||
		fail "$tool" "downloading modules" "go list -deps $pkg in $src (after changing a pin run 'go mod tidy' there; check a version with: go mod download -json MODULE@VERSION)"
	(cd "$src" && go_env go build -mod=readonly -trimpath -ldflags="$ldflags" -o "$tmp" "$pkg") ||
		fail "$tool" "compiling" "go build $pkg in $src"
	chmod 0755 "$tmp"
	{
		printf 'tool: %s\nmodule: %s %s\npackage: %s\ncgo: %s\nldflags: %s\ngo: %s\nbuilt: %s in %ss\n' \
			"$tool" "$main_mod" "$version" "$pkg" "$cgo" "$ldflags" "$goversion" \
			"$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$((SECONDS - start))"
	} >"$dir/build-info.txt"
	mv -f "$tmp" "$bin" || fail "$tool" "installing" "mv $tmp $bin"
	trap - EXIT
	exec {lockfd}>&-
	log "$tool: built in $((SECONDS - start))s: $bin"
	printf '%s\n' "$bin"
}

main() {
	if (($# != 1)); then
		usage
		exit 2
	fi
	case $1 in
	-h | --help | help)
		usage
		;;
	list)
		printf '%s\n' "${ALL_TOOLS[@]}" "${BENCH_TOOLS[@]}" "${RELEASE_TOOLS[@]}"
		;;
	missing)
		# The tools of "all" that are not built yet (one per line, with
		# "cgo" after those that need a C compiler): builds nothing.
		local t main_mod pkg cgo ldflags version src dir bin root
		for t in "${ALL_TOOLS[@]}"; do
			locate "$t"
			if [[ -n $dir && ! -x $bin ]]; then
				if [[ $cgo == 1 ]]; then printf '%s cgo\n' "$t"; else printf '%s\n' "$t"; fi
			fi
		done
		;;
	all)
		local t failed=()
		for t in "${ALL_TOOLS[@]}"; do
			(tool_path "$t") || failed+=("$t")
		done
		if ((${#failed[@]})); then
			log "error: failed to build: ${failed[*]}"
			exit 1
		fi
		;;
	*)
		tool_path "$1"
		;;
	esac
}

main "$@"
