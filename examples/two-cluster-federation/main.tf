# Federates two clusters with each other from ONE provider block: each
# cluster gets a ClusterFederatedTrustDomain for the other's trust domain,
# wired from what the clusters say about themselves (their SPIRE
# installation's trust domain and bundle endpoint) and bootstrapped with the
# other's current trust bundle. Nothing is copied by hand.
#
# examples/n-cluster-mesh does the same for any number of clusters, with the
# same variable.

terraform {
  required_providers {
    zerotrust = {
      source = "ztfabric/zerotrust"
    }
  }
}

variable "clusters" {
  description = <<-EOT
    The two clusters, keyed by a name of your choice. Per cluster either a
    kubeconfig (config_path + config_context) or host + token +
    cluster_ca_certificate (PEM). bundle_endpoint_url: where the cluster's
    SPIRE federation bundle endpoint is reachable, when zerotrust_spire_server
    finds none (the released operator publishes it only through an OpenShift
    Route).
  EOT
  type = map(object({
    config_path            = optional(string)
    config_context         = optional(string)
    host                   = optional(string)
    token                  = optional(string)
    cluster_ca_certificate = optional(string)
    bundle_endpoint_url    = optional(string)
  }))

  validation {
    condition     = length(var.clusters) == 2
    error_message = "This example federates exactly two clusters; examples/n-cluster-mesh takes any number."
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

locals {
  # Each cluster's one peer: the other cluster.
  peer = {
    for name in keys(var.clusters) : name => one([for other in keys(var.clusters) : other if other != name])
  }
}

# What the other cluster needs to federate with each cluster.
data "zerotrust_spire_server" "this" {
  for_each = local.peer

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
  # The Route the operator publishes, else what the variable says.
  endpoint_url = {
    for name, c in var.clusters : name => try(coalesce(data.zerotrust_spire_server.this[name].bundle_endpoint_url, c.bundle_endpoint_url), null)
  }
}

# peer["east"] lives on east and trusts west; peer["west"] the other way round.
resource "zerotrust_federated_trust_domain" "peer" {
  for_each = local.peer

  cluster             = each.key
  trust_domain        = data.zerotrust_spire_server.this[each.value].trust_domain
  bundle_endpoint_url = local.endpoint_url[each.value]
  bundle_endpoint_profile = {
    type = data.zerotrust_spire_server.this[each.value].federation_profile
    # Only the https_spiffe profile authenticates the endpoint by its SPIFFE ID.
    endpoint_spiffe_id = (data.zerotrust_spire_server.this[each.value].federation_profile == "https_spiffe" ?
    data.zerotrust_spire_server.this[each.value].endpoint_spiffe_id : null)
  }
  trust_domain_bundle = data.zerotrust_trust_bundle.this[each.value].spiffe_bundle

  lifecycle {
    precondition {
      condition     = local.endpoint_url[each.value] != null
      error_message = "Cluster ${each.value} publishes no federation bundle endpoint (no operator Route): set clusters.${each.value}.bundle_endpoint_url."
    }
  }
}

output "federations" {
  description = "Which cluster now federates with which trust domain, through which endpoint."
  value = {
    for name, f in zerotrust_federated_trust_domain.peer : name => "${name} trusts ${f.trust_domain} via ${f.bundle_endpoint_url}"
  }
}
