#!/usr/bin/env bash
# make bench: provider cost against Terraform's floor (terraform_data) and the
# peer providers (kubernetes_manifest, kubectl_manifest) on three local
# clusters; writes bench/REPORT.md, bench/results.json and bench/scaling.png.
# The first run builds the peers from the Go module proxy (a few minutes).
#
# Environment (flags of bench/cmd/bench take precedence):
#   BENCH_N=100,300,1000   object counts
#   BENCH_RUNS=3           interleaved runs per target and N (medians reported)
#   BENCH_TARGETS=...      subset of zerotrust,terraform_data,kubernetes_manifest,kubectl_manifest
#   BENCH_FULL_CYCLES_MAX_N=300 above this N every target applies once, plans in
#                          every run and destroys in its last (see schedule in
#                          bench/cmd/bench/main.go)
#   BENCH_KUBERNETES_DESTROY_MAX_N=100
#                          kubernetes_manifest (rate-limited to 5 requests/s per
#                          alias by client-go) always applies once and plans in
#                          every run; above this N its destroy is not timed
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS=-buildvcs=false GOTOOLCHAIN=local CHECKPOINT_DISABLE=1

# Build first so the measured program is not `go run`'s child build.
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/bench" ./bench/cmd/bench
"$bin/bench" -out bench "$@"
