#!/usr/bin/env bash
# make demo / make demo-down: three local clusters (etcd + kube-apiserver on
# 127.0.0.1), each with a real SPIRE server, spire-controller-manager and a
# pod exec endpoint (pod exec of spire-server-0 reaches the real spire-server
# through the API server, as in the tests), then `terraform apply` of
# examples/n-cluster-mesh with the provider built from this checkout
# (dev_overrides: no registry, no init), then what every SPIRE server holds,
# asked from SPIRE itself, and how long each federation waited for it.
# Each cluster also runs a real k8s_psat spire-agent and a go-spiffe workload
# as a Pod, which gets its identity only from the ClusterSPIFFEID the apply
# creates (through the real spire-controller-manager): the demo tries an mTLS
# handshake between the workloads of every ordered pair of clusters before
# the apply (no identity, no trust) and after it (trust both ways), with no
# step outside Terraform.
# DEMO_SPIRE picks how each cluster's SPIRE is laid out: "operator" (the
# default: all three as the OpenShift operator does) or "mixed" (east as the
# operator does, west and north as the SPIFFE Helm chart's defaults do); the same
# example federates either fleet in one apply.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
state="$root/demo/state"
example="examples/n-cluster-mesh"
clusters=(east west north)
case "${DEMO_SPIRE:-operator}" in
  operator) helm="" ;;
  mixed) helm="west,north" ;;
  *) echo "demo: DEMO_SPIRE is \"operator\" or \"mixed\", not \"$DEMO_SPIRE\"" >&2; exit 2 ;;
esac
export GOFLAGS=-buildvcs=false GOTOOLCHAIN=local CHECKPOINT_DISABLE=1

# ztlab runs from demo/state/bin: its exec endpoints keep running from there.
# Built to a new file and renamed, so running endpoints keep their binary.
ztlab() {
  if [ ! -x "$state/bin/ztlab" ] || [ -z "${ztlab_built:-}" ]; then
    mkdir -p "$state/bin"
    go build -o "$state/bin/ztlab.new" ./internal/testkit/cmd/ztlab
    mv -f "$state/bin/ztlab.new" "$state/bin/ztlab"
    ztlab_built=1
  fi
  "$state/bin/ztlab" "$@"
}

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
  for tool in kube-apiserver etcd spire-server spire-controller-manager spire-agent; do
    scripts/tool.sh "$tool" >/dev/null
  done

  echo "==> building the provider"
  go build -o "$state/bin/terraform-provider-zerotrust" .

  local names
  names=$(IFS=,; echo "${clusters[*]}")
  echo "==> starting ${#clusters[@]} local clusters ($names), each with SPIRE, spire-controller-manager, a pod exec endpoint,"
  echo "    a k8s_psat spire-agent and a workload as the Pod apps/app (label zerotrust.example/workload=app), accepting only the"
  echo "    other clusters' workloads; it has no identity until a ClusterSPIFFEID selects it"
  [ -z "$helm" ] || echo "    (SPIRE of $helm laid out as the SPIFFE Helm chart's defaults do, its BundlePublisher k8s_configmap writing"
  [ -z "$helm" ] || echo "    bundle.spiffe into spire-system/spire-bundle; the others' as the OpenShift operator does, its k8sbundle notifier"
  [ -z "$helm" ] || echo "    writing bundle.crt)"
  # Terraform state left from clusters that no longer run describes nothing:
  # start from an empty one unless the recorded lab is still up (then `up`
  # keeps it, and the apply below changes nothing).
  local before=(--want fail)
  if ! ztlab status --state "$state" >/dev/null 2>&1; then
    rm -rf "$state/work"
  else
    before=()
  fi
  ztlab up --clusters "$names" --spire --helm "$helm" --workloads --state "$state"
  mkdir -p "$state/work"

  echo
  echo "==> before the apply: mTLS between the workloads of every ordered pair of clusters (no workload has an identity and no"
  echo "    cluster trusts another yet; a lab kept from an earlier run is federated already)"
  ztlab mtls --state "$state" "${before[@]}"
  echo

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
  # clusters variable comes from demo/state/clusters.json: per cluster its
  # kubeconfig and context, and its bundle endpoint URL (the lab has no
  # OpenShift Route to read that from).
  cp "$example"/*.tf "$state/work/"
  ztlab tfvars --state "$state" > "$state/work/terraform.tfvars.json"

  echo "==> terraform apply ($example): every cluster federates with every other one, from one provider block;"
  echo "    each ClusterFederatedTrustDomain is created only once SPIRE holds the peer's bundle (wait_for_bundle), then"
  echo "    each cluster's ClusterSPIFFEID gives its workload Pods their identity, federated with every peer, and waits until"
  echo "    SPIRE's entries carry the federations"
  TF_CLI_CONFIG_FILE="$state/terraformrc" KUBECACHEDIR="$state/kubecache" TF_IN_AUTOMATION=1 \
    "$tf" -chdir="$state/work" apply -auto-approve -input=false 2>&1 | tee "$state/apply.log"
  echo
  echo "==> creation time of each ClusterFederatedTrustDomain (includes waiting for SPIRE to hold the peer's bundle) and"
  echo "    ClusterSPIFFEID (includes waiting for SPIRE's entries to federate)"
  sed 's/\x1b\[[0-9;]*m//g' "$state/apply.log" |
    grep -E '^zerotrust_(federated_trust_domain\.peer|cluster_spiffe_id\.workloads)\[.*(Creation complete|Still creating)' ||
    echo "(none created: the lab already held them)"
  echo
  echo "==> what each cluster holds (objects asked from its API server; bundles asked from its SPIRE server)"
  # wait_for_bundle made the apply wait for every peer's bundle; the 60 s are
  # a safeguard. Exits non-zero if one is still missing.
  ztlab show --state "$state" --wait 60s
  echo
  echo "==> after the apply: mTLS between the workloads of every ordered pair of clusters, each side authorizing only the"
  echo "    other's SPIFFE ID (from the ClusterSPIFFEIDs' entries; nothing outside Terraform touched them)"
  ztlab mtls --state "$state" --want ok --wait 60s
  echo
  echo "Clusters keep running: kubeconfig at $state/kubeconfig (contexts: $names);"
  echo "trust domains, bundle endpoints and SPIRE admin sockets in $state/clusters.json;"
  echo "pod exec of spire-server-0 (in zero-trust-workload-identity-manager, or spire-server where laid out as the chart does)"
  echo "reaches each cluster's real spire-server."
  echo "Stop them with: make demo-down"
}

case "${1:-up}" in
  up) up ;;
  down) down ;;
  *) echo "usage: $0 up|down" >&2; exit 2 ;;
esac
