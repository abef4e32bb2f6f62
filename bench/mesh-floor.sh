#!/usr/bin/env bash
# make bench-mesh-floor: Terraform's own cost of the wide mesh's shape, with
# no provider at all. The same locals and for_each as the wide mesh of
# `make bench-mesh` (bench/cmd/bench/mesh.go: every ordered pair of
# clusters, N*(N-1) instances), but each instance a terraform_data holding
# the attributes a zerotrust_federated_trust_domain is given there. It needs
# no cluster, so it shows what of the mesh's cost per object at 50 clusters
# is Terraform's before the provider does anything. Writes
# bench/MESH-FLOOR.md; BENCH_CLUSTERS (default "3 10 25 50") picks the
# counts. Every count runs twice: with the local state file, which Terraform
# writes whole after every object it applies, and with the http backend
# against an in-memory store (bench/cmd/stateserver), which, like every
# remote backend, persists at most every 20 seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
export CHECKPOINT_DISABLE=1
tf=$(scripts/tool.sh terraform)
counts=${BENCH_CLUSTERS:-3 10 25 50}
work=$(mktemp -d)
go build -o "$work/stateserver" ./bench/cmd/stateserver
"$work/stateserver" >"$work/state-url" &
state_pid=$!
trap 'kill "$state_pid" 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 50); do [ -s "$work/state-url" ] && break; sleep 0.1; done
state_url=$(head -1 "$work/state-url")
# No CLI configuration: terraform_data needs no provider installation.
: >"$work/terraformrc"
export TF_CLI_CONFIG_FILE="$work/terraformrc"

# timed runs "$@" and prints "wall cpu" in seconds (bash's time: real, and
# user + system of the command and its children).
timed() {
  local TIMEFORMAT='%R %U %S'
  { time "$@" >/dev/null 2>&1; } 2>&1 | awk '{ printf "%.2f %.2f\n", $1, $2 + $3 }'
}

out="bench/MESH-FLOOR.md"
{
  echo "## Wide mesh floor: the mesh's shape with terraform_data, no provider"
  echo
  echo "$(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')), $("$tf" version | head -1), started $(date -u +%Y-%m-%dT%H:%M:%SZ)."
  echo
  echo "| clusters | state | objects | apply wall | apply CPU | apply CPU ms/object | plan wall | plan CPU | plan CPU ms/object | load (1 min) after |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
} >"$out"
for n in ${counts//,/ }; do
for state in local http; do
  dir="$work/n$n-$state"
  mkdir -p "$dir"
  backend=""
  if [ "$state" = http ]; then
    backend="terraform {
  backend \"http\" {
    address = \"$state_url/floor-$n\"
  }
}"
  fi
  cat >"$dir/main.tf" <<EOF
$backend
locals {
  clusters = { for i in range($n) : "c\${i}" => i }
  pairs = {
    for pair in setproduct(keys(local.clusters), keys(local.clusters)) :
    "\${pair[0]}->\${pair[1]}" => { cluster = pair[0], peer = pair[1] }
    if pair[0] != pair[1]
  }
}

resource "terraform_data" "peer" {
  for_each = local.pairs

  input = {
    cluster             = each.value.cluster
    trust_domain        = "\${each.value.peer}.mesh.bench.example.org"
    bundle_endpoint_url = "https://\${each.value.peer}.mesh.bench.example.org:8443"
    endpoint_spiffe_id  = "spiffe://\${each.value.peer}.mesh.bench.example.org/spire/server"
  }
}
EOF
  "$tf" -chdir="$dir" init -input=false >/dev/null
  objects=$((n * (n - 1)))
  read -r aw ac < <(timed "$tf" -chdir="$dir" apply -auto-approve -input=false)
  read -r pw pc < <(timed "$tf" -chdir="$dir" plan -input=false)
  load=$(cut -d' ' -f1 /proc/loadavg)
  awk -v n="$n" -v s="$state" -v o="$objects" -v aw="$aw" -v ac="$ac" -v pw="$pw" -v pc="$pc" -v l="$load" \
    'BEGIN { printf "| %d | %s | %d | %.1f s | %.1f s | %.1f | %.1f s | %.1f s | %.2f | %s |\n", n, s, o, aw, ac, 1000*ac/o, pw, pc, 1000*pc/o, l }' >>"$out"
  echo "mesh floor: $n clusters, $state state done"
done
done
cat "$out"
