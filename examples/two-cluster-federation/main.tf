# Federates every cluster with every other one from ONE provider block:
# each cluster gets a ClusterFederatedTrustDomain for each peer's trust domain.
# Adding a cluster is one more entry in var.clusters.

terraform {
  required_providers {
    zerotrust = {
      source = "ztfabric/zerotrust"
    }
  }
}

variable "kubeconfig" {
  description = "Kubeconfig holding one context per cluster (make demo writes demo/state/kubeconfig)."
  type        = string
}

variable "clusters" {
  description = "Per cluster: its kubeconfig context, its SPIFFE trust domain and its SPIRE bundle endpoint."
  type = map(object({
    trust_domain    = string
    bundle_endpoint = string
  }))
  default = {
    east = { trust_domain = "east.demo.test", bundle_endpoint = "https://spire-east.demo.test:8443" }
    west = { trust_domain = "west.demo.test", bundle_endpoint = "https://spire-west.demo.test:8443" }
  }
}

variable "bootstrap_bundles" {
  description = "Optional SPIFFE bundle JSON per cluster, handed to its peers once, at creation."
  type        = map(string)
  default     = {}
}

provider "zerotrust" {
  clusters = {
    for name, _ in var.clusters : name => {
      config_path    = var.kubeconfig
      config_context = name
    }
  }
}

locals {
  # Every ordered pair (cluster, peer) with cluster != peer.
  pairs = merge([
    for cluster, _ in var.clusters : {
      for peer, p in var.clusters : "${cluster}->${peer}" => {
        cluster = cluster
        peer    = p
        bundle  = lookup(var.bootstrap_bundles, peer, null)
      } if peer != cluster
    }
  ]...)
}

resource "zerotrust_federated_trust_domain" "peer" {
  for_each = local.pairs

  cluster             = each.value.cluster
  trust_domain        = each.value.peer.trust_domain
  bundle_endpoint_url = each.value.peer.bundle_endpoint
  bundle_endpoint_profile = {
    type               = "https_spiffe"
    endpoint_spiffe_id = provider::zerotrust::spiffe_id(each.value.peer.trust_domain, "spire", "server")
  }
  trust_domain_bundle = each.value.bundle
}

output "federations" {
  description = "Which cluster now federates with which trust domain."
  value = {
    for k, v in zerotrust_federated_trust_domain.peer : k => "${v.cluster} trusts ${v.trust_domain} via ${v.bundle_endpoint_url}"
  }
}
