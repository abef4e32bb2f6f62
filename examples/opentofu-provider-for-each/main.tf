# OpenTofu >= 1.9 only: one provider configuration per cluster from a single
# `provider` block with for_each, then every ordered pair of clusters
# federated, each ClusterFederatedTrustDomain created through the provider
# instance of the cluster it lives on.
#
# This is the shape for when each cluster needs a provider configuration of
# its own (different credentials per cluster, or a separate provider
# instance per cluster for isolation). With this provider the `clusters` map
# does the same in any Terraform or OpenTofu version (examples/n-cluster-mesh).
#
# Terraform does not accept for_each in provider blocks: validate and run
# this with `tofu`.

terraform {
  required_version = ">= 1.9"

  required_providers {
    zerotrust = {
      source = "ztfabric/zerotrust"
    }
  }
}

variable "clusters" {
  description = <<-EOT
    The clusters to federate, keyed by name: the kubeconfig file and context of
    each. Provider for_each needs it known while planning (a variable or
    local, not a resource attribute).
  EOT
  type = map(object({
    config_path    = string
    config_context = string
  }))
  default = {
    east = { config_path = "~/.kube/config", config_context = "east" }
    west = { config_path = "~/.kube/config", config_context = "west" }
  }

  validation {
    condition     = length(var.clusters) >= 2
    error_message = "Federation needs at least two clusters."
  }
}

provider "zerotrust" {
  alias    = "cluster"
  for_each = var.clusters

  kubernetes = {
    config_path    = each.value.config_path
    config_context = each.value.config_context
  }
}

locals {
  # "east->west" lives on east and trusts west.
  pairs = {
    for p in setproduct(keys(var.clusters), keys(var.clusters)) : "${p[0]}->${p[1]}" => { local = p[0], peer = p[1] }
    if p[0] != p[1]
  }
}

data "zerotrust_spire_server" "this" {
  for_each = var.clusters
  provider = zerotrust.cluster[each.key]
}

data "zerotrust_trust_bundle" "this" {
  for_each     = var.clusters
  provider     = zerotrust.cluster[each.key]
  trust_domain = data.zerotrust_spire_server.this[each.key].trust_domain
  config_map = {
    namespace = data.zerotrust_spire_server.this[each.key].namespace
    name      = data.zerotrust_spire_server.this[each.key].bundle_config_map
  }
}

resource "zerotrust_federated_trust_domain" "peer" {
  for_each = local.pairs
  provider = zerotrust.cluster[each.value.local]

  trust_domain        = data.zerotrust_spire_server.this[each.value.peer].trust_domain
  bundle_endpoint_url = data.zerotrust_spire_server.this[each.value.peer].bundle_endpoint_url
  bundle_endpoint_profile = {
    type = data.zerotrust_spire_server.this[each.value.peer].federation_profile
    endpoint_spiffe_id = (data.zerotrust_spire_server.this[each.value.peer].federation_profile == "https_spiffe" ?
    data.zerotrust_spire_server.this[each.value.peer].endpoint_spiffe_id : null)
  }
  trust_domain_bundle = data.zerotrust_trust_bundle.this[each.value.peer].spiffe_bundle
}

output "federations" {
  description = "Per ordered pair, the trust domain the first cluster now federates with."
  value       = { for k, f in zerotrust_federated_trust_domain.peer : k => f.trust_domain }
}
