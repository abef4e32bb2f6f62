#!/usr/bin/env bash
# make demo / make demo-down: local clusters (etcd + kube-apiserver on
# 127.0.0.1), then `terraform apply` of examples/two-cluster-federation with
# the provider built from this checkout (dev_overrides: no registry, no init).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
state="$root/demo/state"
example="examples/two-cluster-federation"
export GOFLAGS=-buildvcs=false GOTOOLCHAIN=local CHECKPOINT_DISABLE=1

down() {
  if [ -f "$state/lab.json" ]; then
    go run ./internal/cmd/ztlab down --state "$state"
    # The clusters are gone, and so are the objects that state described.
    rm -rf "$state/work"
  else
    echo "demo: nothing running (no $state/lab.json)"
  fi
}

up() {
  mkdir -p "$state/bin" "$state/work"
  echo "==> building tools (first run builds kube-apiserver, etcd and maybe terraform: ~5-10 min)"
  tf=$(scripts/tool.sh terraform)
  scripts/tool.sh kube-apiserver >/dev/null
  scripts/tool.sh etcd >/dev/null

  echo "==> building the provider"
  go build -o "$state/bin/terraform-provider-zerotrust" .

  echo "==> starting two local clusters: east, west"
  go run ./internal/cmd/ztlab up --clusters east,west --state "$state"

  cat > "$state/terraformrc" <<RC
disable_checkpoint = true
provider_installation {
  dev_overrides {
    "ztfabric/zerotrust" = "$state/bin"
  }
  direct {}
}
RC
  # Work on a copy so the example directory stays free of state files.
  cp "$example"/*.tf "$state/work/"
  echo "==> terraform apply ($example) against both clusters from one provider block"
  TF_CLI_CONFIG_FILE="$state/terraformrc" KUBECACHEDIR="$state/kubecache" TF_IN_AUTOMATION=1 \
    "$tf" -chdir="$state/work" apply -auto-approve -input=false \
    -var "kubeconfig=$state/kubeconfig"
  echo
  echo "==> what the clusters now hold (asked from each API server)"
  go run ./internal/cmd/ztlab show --state "$state"
  echo
  echo "Clusters keep running: kubeconfig at $state/kubeconfig (contexts east, west)."
  echo "Stop them with: make demo-down"
}

case "${1:-up}" in
  up) up ;;
  down) down ;;
  *) echo "usage: $0 up|down" >&2; exit 2 ;;
esac
