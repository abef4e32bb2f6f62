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
#   BENCH_KUBERNETES_CYCLE_MAX_N=100
#                          above this N, kubernetes_manifest (rate-limited to
#                          5 requests/s per alias by client-go) applies once and
#                          plans in every run instead of full cycles, so the
#                          default run fits in 45 minutes
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS=-buildvcs=false GOTOOLCHAIN=local CHECKPOINT_DISABLE=1

# Build first so the measured program is not `go run`'s child build.
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/bench" ./bench/cmd/bench
"$bin/bench" -out bench "$@"
