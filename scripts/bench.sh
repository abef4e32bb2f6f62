#!/usr/bin/env bash
# make bench: provider cost against two floors (plugin_floor: a do-nothing
# provider with zerotrust's schemas on the same framework; terraform_data:
# Terraform's built-in resource) and the peer providers (kubernetes_manifest,
# kubectl_manifest) on three local clusters, then the full-mesh bootstrap of
# 3, 6 and 10 clusters with real SPIRE in one apply; writes bench/REPORT.md,
# bench/results.json and the PNG plots. The first run builds the peers and
# terraform 1.11 from the Go module proxy (minutes).
#
# Environment (flags of bench/cmd/bench take precedence):
#   BENCH_SCALE=all        objects (N objects on 3 clusters), clusters (the
#                          full-mesh part alone, with the courier mesh at the
#                          smallest count), courier (the courier mesh of the
#                          smallest count alone), lean (the N=1000 lean pair
#                          alone, make bench-lean), mesh (full mesh without
#                          SPIRE on one etcd, make bench-mesh), mesh-dead
#                          (that mesh with one cluster dead against all
#                          alive, make bench-mesh-dead), fleet
#                          (examples/n-cluster-mesh with real SPIRE and
#                          workloads, make bench-fleet) or all
#   BENCH_N=100,300,1000   object counts
#   BENCH_CLUSTERS=3,6,10  cluster counts of the full-mesh part
#   BENCH_TRUST=true       full-mesh part: also time to trust (a workload per
#                          cluster, every ordered pair handshakes) and, at the
#                          smallest count, time to heal
#   BENCH_RUNS=3           interleaved runs per target and N (medians reported)
#   BENCH_TARGETS=...      subset of zerotrust,zerotrust_framework (the same
#                          provider with ZEROTRUST_FASTPATH=off),plugin_floor,terraform_data,
#                          kubernetes_manifest,kubectl_manifest (both floors
#                          always run)
#   BENCH_PEERS_MAX_N=300  largest N of the peers (kubernetes_manifest: also
#                          at most BENCH_KUBERNETES_DESTROY_MAX_N)
#   BENCH_ALSO_TERRAFORM=terraform-1.11  further CLIs (scripts/tool.sh names,
#                          "none" for none) running zerotrust and both floors
#   BENCH_ALSO_N=300       N of those runs
#   BENCH_FULL_CYCLES_MAX_N=300 above this N every target applies once, plans in
#                          every run and destroys in its last (see schedule in
#                          bench/cmd/bench/main.go)
#   BENCH_KUBERNETES_DESTROY_MAX_N=100
#   BENCH_FLEET_STATE=pg   the fleet's state backend: pg (Terraform's pg
#                          backend on a PostgreSQL server the bench starts) or
#                          local (the state file; writes bench/FLEET-local.md)
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS=-buildvcs=false GOTOOLCHAIN=local CHECKPOINT_DISABLE=1

# Build first so the measured program is not `go run`'s child build.
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/bench" ./bench/cmd/bench
"$bin/bench" -out bench "$@"
