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
# Each cluster's SPIRE may come from the OpenShift operator or from the
# SPIFFE Helm chart (spire_install), in any mix: each provider instance then
# reads the bundle where its cluster's install publishes it.
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
    local, not a resource attribute). bundle_endpoint_url: where peers reach
    the cluster's SPIRE bundle endpoint; needed when the cluster states none
    (no operator federation Route, no chart federation Ingress), and when set
    it wins. spire_install: "operator" (the OpenShift Zero Trust Workload
    Identity Manager, the default when unset) or "helm" (the SPIFFE Helm
    chart spiffe/spire with its recommended layout); it becomes the provider
    instance's `spire = { install = ... }`.
  EOT
  type = map(object({
    config_path         = string
    config_context      = string
    bundle_endpoint_url = optional(string)
    spire_install       = optional(string)
  }))
  default = {
    east = { config_path = "~/.kube/config", config_context = "east" }
    west = { config_path = "~/.kube/config", config_context = "west" }
  }

  validation {
    condition     = length(var.clusters) >= 2
    error_message = "Federation needs at least two clusters."
  }
  validation {
    condition     = alltrue([for c in values(var.clusters) : contains(["operator", "helm"], coalesce(c.spire_install, "operator"))])
    error_message = "spire_install is \"operator\" or \"helm\"."
  }
}

provider "zerotrust" {
  alias    = "cluster"
  for_each = var.clusters

  kubernetes = {
    config_path    = each.value.config_path
    config_context = each.value.config_context
  }
  spire = each.value.spire_install == null ? null : { install = each.value.spire_install }
}

locals {
  # "east->west" lives on east and trusts west.
  pairs = {
    for p in setproduct(keys(var.clusters), keys(var.clusters)) : "${p[0]}->${p[1]}" => { local = p[0], peer = p[1] }
    if p[0] != p[1]
  }

  # Per cluster, what its peers need: the URL given, else the one the cluster
  # states; its endpoint's profile (https_spiffe when it states none) and the
  # SPIFFE ID the endpoint presents (SPIRE's default when not read).
  endpoint_url = {
    for name, c in var.clusters : name => c.bundle_endpoint_url != null ? c.bundle_endpoint_url : data.zerotrust_spire_server.this[name].bundle_endpoint_url
  }
  profile = {
    for name, s in data.zerotrust_spire_server.this : name => s.federation_profile != null ? s.federation_profile : "https_spiffe"
  }
  endpoint_spiffe_id = {
    for name, s in data.zerotrust_spire_server.this :
    name => s.endpoint_spiffe_id != null ? s.endpoint_spiffe_id : provider::zerotrust::spiffe_id(s.trust_domain, "spire", "server")
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
    namespace = data.zerotrust_spire_server.this[each.key].bundle_namespace
    name      = data.zerotrust_spire_server.this[each.key].bundle_config_map
  }
}

resource "zerotrust_federated_trust_domain" "peer" {
  for_each = local.pairs
  provider = zerotrust.cluster[each.value.local]

  trust_domain        = data.zerotrust_spire_server.this[each.value.peer].trust_domain
  bundle_endpoint_url = local.endpoint_url[each.value.peer]
  bundle_endpoint_profile = {
    type = local.profile[each.value.peer]
    # Only the https_spiffe profile authenticates the endpoint by its SPIFFE ID.
    endpoint_spiffe_id = local.profile[each.value.peer] == "https_spiffe" ? local.endpoint_spiffe_id[each.value.peer] : null
  }
  trust_domain_bundle = data.zerotrust_trust_bundle.this[each.value.peer].spiffe_bundle
}

output "federations" {
  description = "Per ordered pair, the trust domain the first cluster now federates with."
  value       = { for k, f in zerotrust_federated_trust_domain.peer : k => f.trust_domain }
}
