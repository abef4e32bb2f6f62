package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The full-mesh Terraform configuration the cluster-scaling runs apply.

// meshClusterFacts is what the configuration needs of one cluster: what a
// user puts in examples/n-cluster-mesh's var.clusters.
type meshClusterFacts struct {
	Name, Kubeconfig, BundleEndpointURL string
}

// writeMeshConfig writes dir/main.tf, the full-mesh configuration of
// members (meshConfig).
func writeMeshConfig(env *tfEnv, dir string, members []*meshMember, workloads bool) error {
	facts := make([]meshClusterFacts, len(members))
	for i, m := range members {
		facts[i] = meshClusterFacts{Name: m.cluster.Name, Kubeconfig: m.cluster.Kubeconfig, BundleEndpointURL: m.spire.BundleEndpointURL}
	}
	return os.WriteFile(filepath.Join(dir, "main.tf"), []byte(meshConfig(env.providers[targetZerotrust], facts, workloads)), 0o644)
}

// meshConfig is the full-mesh configuration of clusters: the bootstrap part
// of examples/n-cluster-mesh (without its check block and second bundle
// read, which verify rather than federate; the benchmark asks SPIRE itself)
// plus a zerotrust_spire_federation per cluster for its bundle endpoint
// (its peers are the ClusterFederatedTrustDomains). With workloads,
// also the example's ClusterSPIFFEID per cluster (meshWorkloadsBody), so
// that the workloads' identities and federations come from the same apply.
func meshConfig(p provider, clusters []meshClusterFacts, workloads bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, `terraform {
  required_providers {
    zerotrust = {
      source  = %q
      version = "= %s"
    }
  }
}

# What var.clusters of examples/n-cluster-mesh holds: how to reach each
# cluster, and its bundle endpoint URL, since these clusters serve no
# OpenShift Route to read it from.
locals {
  clusters = {
`, strings.TrimPrefix(p.source, "registry.terraform.io/"), p.version)
	for _, c := range clusters {
		fmt.Fprintf(&b, "    %s = { config_path = %q, config_context = %q, bundle_endpoint_url = %q }\n",
			c.Name, c.Kubeconfig, c.Name, c.BundleEndpointURL)
	}
	b.WriteString("  }\n}\n")
	b.WriteString(meshConfigBody)
	if workloads {
		fmt.Fprintf(&b, meshWorkloadsBody, trustCSID, trustTemplate, trustLabels["app"])
	}
	return b.String()
}

// meshWorkloadsBody is examples/n-cluster-mesh's ClusterSPIFFEID, selecting
// the benchmark's pods (name, template, app label): it comes after the
// cluster's federations, whose trust domains it reads.
const meshWorkloadsBody = `
resource "zerotrust_cluster_spiffe_id" "web" {
  for_each = local.clusters

  cluster            = each.key
  name               = %q
  spiffe_id_template = %q
  pod_selector = {
    match_labels = { app = %q }
  }
  federates_with = [
    for f in zerotrust_federated_trust_domain.peer : f.trust_domain if f.cluster == each.key
  ]
}
`

const meshConfigBody = `
provider "zerotrust" {
  clusters = {
    for name, c in local.clusters : name => { config_path = c.config_path, config_context = c.config_context }
  }
}

data "zerotrust_spire_server" "this" {
  for_each = local.clusters
  cluster  = each.key
}

data "zerotrust_trust_bundle" "this" {
  for_each = data.zerotrust_spire_server.this

  cluster      = each.key
  trust_domain = each.value.trust_domain
  config_map = {
    namespace = each.value.namespace
    name      = each.value.bundle_config_map
  }
}

locals {
  # "a->b": cluster a federates with (trusts) b.
  pairs = {
    for pair in setproduct(keys(local.clusters), keys(local.clusters)) :
    "${pair[0]}->${pair[1]}" => { cluster = pair[0], peer = pair[1] }
    if pair[0] != pair[1]
  }
}

resource "zerotrust_spire_federation" "this" {
  for_each = local.clusters
  cluster  = each.key

  # The bundle endpoint only: each peer is federated by its
  # ClusterFederatedTrustDomain below, and a plan that also lists it in
  # federates_with is refused (SPIRE's configuration file would override it).
  bundle_endpoint = {
    profile = "https_spiffe"
  }
}

resource "zerotrust_federated_trust_domain" "peer" {
  for_each = local.pairs

  cluster             = each.value.cluster
  trust_domain        = data.zerotrust_spire_server.this[each.value.peer].trust_domain
  bundle_endpoint_url = local.clusters[each.value.peer].bundle_endpoint_url
  bundle_endpoint_profile = {
    type               = "https_spiffe"
    endpoint_spiffe_id = data.zerotrust_spire_server.this[each.value.peer].endpoint_spiffe_id
  }
  trust_domain_bundle = data.zerotrust_trust_bundle.this[each.value.peer].spiffe_bundle
  wait_for_bundle     = true
}
`
