# Federates two clusters with each other from ONE provider block: each
# cluster gets a ClusterFederatedTrustDomain for the other's trust domain,
# wired from what the clusters say about themselves (their SPIRE
# installation's trust domain and bundle endpoint) and bootstrapped with the
# other's current trust bundle. Nothing is copied by hand.
#
# Each cluster's SPIRE may come from the OpenShift operator or from the
# SPIFFE Helm chart (spire_install below), so one of each works too: the
# trust domain, bundle endpoint and bundle are read where that install keeps
# them (on a chart install, the bundle ConfigMap is in spire-system, apart
# from the server in spire-server).
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
    cluster_ca_certificate (PEM). bundle_endpoint_url: where peers reach the
    cluster's SPIRE federation bundle endpoint; needed when the cluster states
    none (no operator federation Route, no chart federation Ingress), and when
    set it wins over the one the cluster states. spire_install: how the
    cluster's SPIRE was installed, "operator" (the OpenShift Zero Trust
    Workload Identity Manager, the default when unset) or "helm" (the SPIFFE
    Helm chart spiffe/spire with its recommended layout); it becomes the
    cluster's `spire = { install = ... }` in the provider block, so the
    namespaces, server pod and class follow that install's defaults.
  EOT
  type = map(object({
    config_path            = optional(string)
    config_context         = optional(string)
    host                   = optional(string)
    token                  = optional(string)
    cluster_ca_certificate = optional(string)
    bundle_endpoint_url    = optional(string)
    spire_install          = optional(string)
  }))

  validation {
    condition     = length(var.clusters) == 2
    error_message = "This example federates exactly two clusters; examples/n-cluster-mesh takes any number."
  }
  validation {
    condition     = alltrue([for c in values(var.clusters) : contains(["operator", "helm"], coalesce(c.spire_install, "operator"))])
    error_message = "spire_install is \"operator\" or \"helm\"."
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
      # The rest of the cluster's SPIRE settings follow its install's
      # defaults; null keeps the provider's (the operator's).
      spire = c.spire_install == null ? null : { install = c.spire_install }
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

# Each cluster's trust bundle, from the ConfigMap its SPIRE server keeps
# current, in the namespace its install publishes it to.
data "zerotrust_trust_bundle" "this" {
  for_each = data.zerotrust_spire_server.this

  cluster      = each.key
  trust_domain = each.value.trust_domain
  config_map = {
    namespace = each.value.bundle_namespace
    name      = each.value.bundle_config_map
  }
}

locals {
  # The URL the variable gives, else the one the cluster states (the
  # operator's federation Route, the chart's federation Ingress).
  endpoint_url = {
    for name, c in var.clusters : name => c.bundle_endpoint_url != null ? c.bundle_endpoint_url : data.zerotrust_spire_server.this[name].bundle_endpoint_url
  }
  # The endpoint's profile as the cluster states it; https_spiffe (the
  # default of both installs) when it states none.
  profile = {
    for name, s in data.zerotrust_spire_server.this : name => s.federation_profile != null ? s.federation_profile : "https_spiffe"
  }
  # The ID its endpoint presents: read, else SPIRE's default for the trust domain.
  endpoint_spiffe_id = {
    for name, s in data.zerotrust_spire_server.this :
    name => s.endpoint_spiffe_id != null ? s.endpoint_spiffe_id : provider::zerotrust::spiffe_id(s.trust_domain, "spire", "server")
  }
}

# peer["east"] lives on east and trusts west; peer["west"] the other way round.
resource "zerotrust_federated_trust_domain" "peer" {
  for_each = local.peer

  cluster             = each.key
  trust_domain        = data.zerotrust_spire_server.this[each.value].trust_domain
  bundle_endpoint_url = local.endpoint_url[each.value]
  bundle_endpoint_profile = {
    type = local.profile[each.value]
    # Only the https_spiffe profile authenticates the endpoint by its SPIFFE ID.
    endpoint_spiffe_id = local.profile[each.value] == "https_spiffe" ? local.endpoint_spiffe_id[each.value] : null
  }
  trust_domain_bundle = data.zerotrust_trust_bundle.this[each.value].spiffe_bundle

  lifecycle {
    precondition {
      condition     = local.endpoint_url[each.value] != null
      error_message = "Cluster ${each.value} states no federation bundle endpoint (no operator Route, no chart Ingress): set clusters.${each.value}.bundle_endpoint_url."
    }
  }
}

output "federations" {
  description = "Which cluster now federates with which trust domain, through which endpoint."
  value = {
    for name, f in zerotrust_federated_trust_domain.peer : name => "${name} trusts ${f.trust_domain} via ${f.bundle_endpoint_url}"
  }
}
