#!/usr/bin/env bash
# Builds the release artifacts .goreleaser.yml describes, locally and without
# publishing or signing: linux/darwin/windows x amd64/arm64 binaries
# (CGO_ENABLED=0, -trimpath, -s -w, main.version), one zip per platform named
# terraform-provider-zerotrust_<version>_<os>_<arch>.zip, the registry
# manifest as terraform-provider-zerotrust_<version>_manifest.json, and
# terraform-provider-zerotrust_<version>_SHA256SUMS, all in dist/.
#
# It uses `go build` and `zip`-free Go tooling rather than goreleaser, so it
# needs nothing beyond the Go toolchain; the layout matches goreleaser's.
#
#   scripts/release-dry-run.sh [VERSION]   (default: 0.0.0-dev+<commit>)
set -euo pipefail
cd "$(dirname "$0")/.."

name=terraform-provider-zerotrust
version=${1:-0.0.0-dev+$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
version=${version#v}
platforms=(linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64)
dist=dist

rm -rf "$dist"
mkdir -p "$dist"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A zip writer in Go, so the script needs no zip binary: fixed timestamps
# and 0755 modes make the archives reproducible.
mkdir -p "$work/zipper"
cat >"$work/zipper/main.go" <<'GO'
package main

import (
	"archive/zip"
	"io"
	"log"
	"os"
	"path/filepath"
	"time"
)

// usage: zipper OUT.zip FILE...
func main() {
	out, err := os.Create(os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	w := zip.NewWriter(out)
	for _, f := range os.Args[2:] {
		src, err := os.Open(f)
		if err != nil {
			log.Fatal(err)
		}
		h := &zip.FileHeader{Name: filepath.Base(f), Method: zip.Deflate, Modified: time.Unix(0, 0).UTC()}
		h.SetMode(0o755)
		dst, err := w.CreateHeader(h)
		if err != nil {
			log.Fatal(err)
		}
		if _, err := io.Copy(dst, src); err != nil {
			log.Fatal(err)
		}
		src.Close()
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	if err := out.Close(); err != nil {
		log.Fatal(err)
	}
}
GO
(cd "$work/zipper" && GOFLAGS= GOWORK=off go mod init zipper >/dev/null 2>&1 && GOFLAGS= GOWORK=off go build -o "$work/zip" .)

echo "release-dry-run: version $version (go build; goreleaser is not used, nothing is published or signed)"
for p in "${platforms[@]}"; do
	os=${p%/*} arch=${p#*/}
	ext=
	[[ $os == windows ]] && ext=.exe
	bin=$work/$os-$arch/${name}_v$version$ext
	mkdir -p "$(dirname "$bin")"
	GOOS=$os GOARCH=$arch CGO_ENABLED=0 GOFLAGS=-buildvcs=false \
		go build -trimpath -ldflags "-s -w -X main.version=$version" -o "$bin" .
	"$work/zip" "$dist/${name}_${version}_${os}_${arch}.zip" "$bin"
	printf '  %-14s %s\n' "$p" "$dist/${name}_${version}_${os}_${arch}.zip"
done
cp terraform-registry-manifest.json "$dist/${name}_${version}_manifest.json"
(cd "$dist" && sha256sum ./*.zip ./*_manifest.json | sed 's| \./| |' >"${name}_${version}_SHA256SUMS")
echo "release-dry-run: $(ls "$dist" | wc -l) files in $dist/ (${#platforms[@]} zips, manifest, SHA256SUMS)"
