#!/usr/bin/env bash
# make demo / make demo-down: three local clusters (etcd + kube-apiserver on
# 127.0.0.1), each with a real SPIRE server and spire-controller-manager, then
# `terraform apply` of examples/n-cluster-mesh with the provider built from
# this checkout (dev_overrides: no registry, no init), then what every SPIRE
# server holds, asked from SPIRE itself.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
state="$root/demo/state"
example="examples/n-cluster-mesh"
clusters=(east west north)
export GOFLAGS=-buildvcs=false GOTOOLCHAIN=local CHECKPOINT_DISABLE=1

ztlab() { go run ./internal/cmd/ztlab "$@"; }

down() {
  if [ -f "$state/lab.json" ]; then
    ztlab down --state "$state"
    # The clusters are gone, and so are the objects that state described.
    rm -rf "$state/work"
  else
    echo "demo: nothing running (no $state/lab.json)"
  fi
}

up() {
  mkdir -p "$state/bin" "$state/work"
  echo "==> building tools (the first run builds kube-apiserver, etcd, SPIRE and maybe terraform: ~15 min)"
  tf=$(scripts/tool.sh terraform)
  for tool in kube-apiserver etcd spire-server spire-controller-manager; do
    scripts/tool.sh "$tool" >/dev/null
  done

  echo "==> building the provider"
  go build -o "$state/bin/terraform-provider-zerotrust" .

  local names
  names=$(IFS=,; echo "${clusters[*]}")
  echo "==> starting ${#clusters[@]} local clusters ($names), each with SPIRE and spire-controller-manager"
  # Terraform state left from clusters that no longer run describes nothing:
  # start from an empty one unless the recorded lab is still up (then `up`
  # keeps it, and the apply below changes nothing).
  if ! ztlab status --state "$state" >/dev/null 2>&1; then
    rm -rf "$state/work"
  fi
  ztlab up --clusters "$names" --spire --state "$state"
  mkdir -p "$state/work"

  cat > "$state/terraformrc" <<RC
disable_checkpoint = true
provider_installation {
  dev_overrides {
    "ztfabric/zerotrust" = "$state/bin"
  }
  direct {}
}
RC
  # Work on a copy so the example directory stays free of state files. The
  # clusters variable names a kubeconfig and context per cluster, as
  # demo/state/clusters.json lists them.
  cp "$example"/*.tf "$state/work/"
  {
    printf '{\n  "clusters": {\n'
    local i=0 sep
    for name in "${clusters[@]}"; do
      i=$((i + 1))
      sep=","
      [ "$i" -eq "${#clusters[@]}" ] && sep=""
      printf '    "%s": { "config_path": "%s", "config_context": "%s" }%s\n' "$name" "$state/kubeconfig" "$name" "$sep"
    done
    printf '  }\n}\n'
  } > "$state/work/terraform.tfvars.json"

  echo "==> terraform apply ($example): every cluster federates with every other one, from one provider block"
  TF_CLI_CONFIG_FILE="$state/terraformrc" KUBECACHEDIR="$state/kubecache" TF_IN_AUTOMATION=1 \
    "$tf" -chdir="$state/work" apply -auto-approve -input=false
  echo
  echo "==> what each cluster holds (objects asked from its API server; bundles asked from its SPIRE server)"
  # spire-controller-manager reconciles asynchronously: wait up to 60 s for
  # every peer's bundle; exits non-zero if one is still missing.
  ztlab show --state "$state" --wait 60s
  echo
  echo "Clusters keep running: kubeconfig at $state/kubeconfig (contexts: $names);"
  echo "trust domains, bundle endpoints and SPIRE admin sockets in $state/clusters.json."
  echo "Stop them with: make demo-down"
}

case "${1:-up}" in
  up) up ;;
  down) down ;;
  *) echo "usage: $0 up|down" >&2; exit 2 ;;
esac
