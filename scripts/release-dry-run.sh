#!/usr/bin/env bash
# Runs the release as .goreleaser.yml describes it, locally and without
# publishing, with the goreleaser pinned in tools/goreleaser (built into the
# tool cache by scripts/tool.sh on first use):
#
#   goreleaser check
#   goreleaser release --snapshot --clean --skip=publish,sign
#
# then verifies what the Terraform Registry needs in dist/: one zip per
# linux/darwin/windows x amd64/arm64, each holding the binary
# terraform-provider-zerotrust_v<version> (.exe on windows); the manifest
# terraform-provider-zerotrust_<version>_manifest.json with protocol 6.0; and
# terraform-provider-zerotrust_<version>_SHA256SUMS that `sha256sum -c`
# accepts. It prints the files with their sizes, or fails naming what is wrong.
#
# goreleaser checksums the manifest (checksum.extra_files) but only copies it
# at publish (release.extra_files), so this script puts that copy in dist/
# under the release name; `sha256sum -c` then proves it is the file that was
# checksummed.
#
# Signing is skipped: SHA256SUMS is signed with the release GPG key, which
# only the release workflow has. A snapshot never publishes; the version is
# goreleaser's snapshot version (<last tag, or 0.0.0>-SNAPSHOT-<commit>).
#
#   scripts/release-dry-run.sh
set -euo pipefail
cd "$(dirname "$0")/.."

name=terraform-provider-zerotrust
platforms=(linux_amd64 linux_arm64 darwin_amd64 darwin_arm64 windows_amd64 windows_arm64)
dist=dist

fail() {
	printf 'release-dry-run: FAILED: %s\n' "$*" >&2
	exit 1
}

# unzip lists the archives; a fresh Debian machine may lack it.
if ! command -v unzip >/dev/null 2>&1 && [[ $(id -u) -eq 0 ]]; then
	echo "release-dry-run: installing unzip" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq unzip >&2 ||
		{ apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq unzip >&2; } || true
fi
for cmd in git sha256sum unzip; do
	command -v "$cmd" >/dev/null 2>&1 || fail "'$cmd' is not on PATH (apt-get install $cmd)"
done

goreleaser=$(scripts/tool.sh goreleaser) || fail "cannot build goreleaser (scripts/tool.sh goreleaser)"
echo "release-dry-run: $("$goreleaser" --version 2>/dev/null | grep -m1 '^GitVersion' | tr -s ' ' || echo goreleaser)"

# goreleaser builds with the Go on PATH, like make build.
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false

# A clone without a remote (git init, or a copy) makes goreleaser drop all its
# git facts, commit included ("0.0.0-SNAPSHOT-none", epoch timestamps). Give
# it the project's URL through the environment, for its processes only; the
# repository's configuration is not touched, and nothing is fetched.
if [[ -z $(git remote) ]]; then
	export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url \
		GIT_CONFIG_VALUE_0=https://github.com/ztfabric/terraform-provider-zerotrust.git
fi

"$goreleaser" check || fail "goreleaser check rejected .goreleaser.yml"
"$goreleaser" release --snapshot --clean --skip=publish,sign ||
	fail "goreleaser release --snapshot failed (see its output above)"

# The version goreleaser gave the snapshot, from dist/metadata.json.
[[ -f $dist/metadata.json ]] || fail "$dist/metadata.json missing: did goreleaser write to $dist/?"
version=$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' "$dist/metadata.json" | head -n1)
[[ -n $version ]] || fail "no version in $dist/metadata.json"

sums=${name}_${version}_SHA256SUMS
manifest=${name}_${version}_manifest.json
files=()

for p in "${platforms[@]}"; do
	zip=${name}_${version}_${p}.zip
	[[ -f $dist/$zip ]] || fail "$dist/$zip missing"
	bin=${name}_v${version}
	[[ $p == windows_* ]] && bin+=.exe
	entries=$(unzip -Z1 "$dist/$zip") || fail "$dist/$zip is not a readable zip"
	grep -qxF "$bin" <<<"$entries" ||
		fail "$dist/$zip does not hold $bin at its top level; it holds: $(tr '\n' ' ' <<<"$entries")"
	files+=("$zip")
done
nzips=$(find "$dist" -maxdepth 1 -name '*.zip' | wc -l)
((nzips == ${#platforms[@]})) || fail "$dist/ has $nzips zips, want ${#platforms[@]}: $(cd "$dist" && echo *.zip)"

[[ -e $dist/$manifest ]] && fail "$dist/$manifest exists already: goreleaser now copies it, drop the copy below"
cp terraform-registry-manifest.json "$dist/$manifest"
cmp -s "$dist/$manifest" terraform-registry-manifest.json ||
	fail "$dist/$manifest differs from terraform-registry-manifest.json"
grep -Eq '"protocol_versions": *\[ *"6\.0" *\]' "$dist/$manifest" ||
	fail "$dist/$manifest does not declare protocol_versions [\"6.0\"]"
files+=("$manifest")

[[ -f $dist/$sums ]] || fail "$dist/$sums missing"
for f in "${files[@]}"; do
	grep -qE "^[0-9a-f]{64}  $f\$" "$dist/$sums" || fail "$dist/$sums has no entry for $f"
done
(cd "$dist" && sha256sum --quiet --strict -c "$sums") || fail "sha256sum -c $dist/$sums failed"
files+=("$sums")

echo "release-dry-run: version $version, ${#files[@]} registry files in $dist/ (not signed, not published):"
for f in "${files[@]}"; do
	printf '  %10s  %s\n' "$(wc -c <"$dist/$f" | tr -d ' ')" "$f"
done
echo "release-dry-run: ok: ${#platforms[@]} zips hold ${name}_v${version}, manifest protocol 6.0, sha256sum -c passes"
