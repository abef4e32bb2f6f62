# Federates N clusters with each other in one `terraform apply`, from ONE
# provider block: every fact comes from the clusters themselves.
#
# Per cluster, data sources read what its SPIRE installation says about itself
# (trust domain, bundle endpoint URL and SPIFFE ID, from the operator's
# ZeroTrustWorkloadIdentityManager and SpireServer `cluster` objects) and its
# current trust bundle (the ConfigMap SPIRE keeps it in). Then every cluster
# gets a ClusterFederatedTrustDomain for every peer, bootstrapped with the
# peer's bundle: N*(N-1) objects, no bundle copied by hand.
#
# Adding a cluster is one more entry in var.clusters: the plan creates only
# its 2*N new objects. A later CA rotation changes the bundles the data sources
# read but plans nothing: the bundle is bootstrap input, and SPIRE keeps
# itself current from the peers' bundle endpoints.

terraform {
  required_providers {
    zerotrust = {
      source = "ztfabric/zerotrust"
    }
  }
}

variable "clusters" {
  description = <<-EOT
    The clusters to federate, keyed by a name of your choice. Per cluster either
    a kubeconfig (config_path + config_context) or host + token +
    cluster_ca_certificate (PEM). `make demo` writes demo/state/clusters.json,
    whose entries give config_path (kubeconfig) and config_context (context).
  EOT
  type = map(object({
    config_path            = optional(string)
    config_context         = optional(string)
    host                   = optional(string)
    token                  = optional(string)
    cluster_ca_certificate = optional(string)
  }))

  validation {
    condition     = length(var.clusters) >= 2
    error_message = "Federation needs at least two clusters."
  }
  validation {
    condition     = alltrue([for c in values(var.clusters) : (c.config_path != null) != (c.host != null)])
    error_message = "Give each cluster either config_path (with config_context) or host (with token and cluster_ca_certificate)."
  }
}

provider "zerotrust" {
  clusters = {
    for name, c in var.clusters : name => {
      config_path            = c.config_path
      config_context         = c.config_context
      host                   = c.host
      token                  = c.token
      cluster_ca_certificate = c.cluster_ca_certificate
    }
  }
}

# What a peer needs to federate with each cluster.
data "zerotrust_spire_server" "this" {
  for_each = toset(keys(var.clusters))

  cluster = each.key
}

# Each cluster's trust bundle, from the ConfigMap its SPIRE server keeps current.
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
  # Every ordered pair of distinct clusters: "east->west" means that east
  # federates with (trusts) west.
  pairs = {
    for pair in setproduct(keys(var.clusters), keys(var.clusters)) :
    "${pair[0]}->${pair[1]}" => { cluster = pair[0], peer = pair[1] }
    if pair[0] != pair[1]
  }
}

resource "zerotrust_federated_trust_domain" "peer" {
  for_each = local.pairs

  cluster             = each.value.cluster
  trust_domain        = data.zerotrust_spire_server.this[each.value.peer].trust_domain
  bundle_endpoint_url = data.zerotrust_spire_server.this[each.value.peer].bundle_endpoint_url
  bundle_endpoint_profile = {
    type = data.zerotrust_spire_server.this[each.value.peer].federation_profile
    # Only the https_spiffe profile authenticates the endpoint by its SPIFFE ID.
    endpoint_spiffe_id = (data.zerotrust_spire_server.this[each.value.peer].federation_profile == "https_spiffe" ?
    data.zerotrust_spire_server.this[each.value.peer].endpoint_spiffe_id : null)
  }
  trust_domain_bundle = data.zerotrust_trust_bundle.this[each.value.peer].spiffe_bundle

  lifecycle {
    precondition {
      condition     = data.zerotrust_spire_server.this[each.value.peer].bundle_endpoint_url != null
      error_message = "Cluster ${each.value.peer} serves no federation bundle endpoint that its SpireServer describes: configure spec.federation (zerotrust_spire_federation) there first."
    }
  }
}

output "trust_domains" {
  description = "Each cluster's trust domain, as its SPIRE installation states it."
  value       = { for name, s in data.zerotrust_spire_server.this : name => s.trust_domain }
}

output "federations" {
  description = "Per cluster, the trust domains it now federates with."
  value = {
    for name in keys(var.clusters) : name => sort([
      for f in zerotrust_federated_trust_domain.peer : f.trust_domain if f.cluster == name
    ])
  }
}

output "bundle_endpoints" {
  description = "Where each cluster's peers fetch its bundle from now on."
  value       = { for name, s in data.zerotrust_spire_server.this : name => s.bundle_endpoint_url }
}
