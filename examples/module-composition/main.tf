# Federates three clusters with one provider configuration per cluster
# (aliases, as when each cluster comes from its own module or workspace), by
# composing examples/modules/spire-federation-peer once per cluster.
#
# Each cluster's facts (trust domain, bundle endpoint) and bundle are read
# from that cluster through its own provider; each module instance then
# gets the other two clusters as peers. With the provider's `clusters` map
# the same takes one for_each instead (examples/n-cluster-mesh).
#
# Each cluster's SPIRE may come from the OpenShift operator or from the
# SPIFFE Helm chart (var.spire_installs), in any mix: each provider
# configuration then reads the bundle where that install publishes it and
# labels the federations with that install's spire-controller-manager class.

terraform {
  required_version = ">= 1.8"

  required_providers {
    zerotrust = {
      source = "ztfabric/zerotrust"
    }
  }
}

variable "kubeconfigs" {
  description = "Per cluster (east, west, north): the kubeconfig file and context that reach it."
  type = object({
    east  = object({ config_path = string, config_context = string })
    west  = object({ config_path = string, config_context = string })
    north = object({ config_path = string, config_context = string })
  })
}

variable "bundle_endpoint_urls" {
  description = <<-EOT
    Per cluster name, where peers reach its SPIRE federation bundle endpoint:
    needed for clusters that state none (no operator federation Route, no chart
    federation Ingress), and when given it wins over the one the cluster states.
  EOT
  type        = map(string)
  default     = {}
}

variable "spire_installs" {
  description = <<-EOT
    Per cluster name, how its SPIRE was installed: "operator" (the OpenShift
    Zero Trust Workload Identity Manager, the default for a cluster not named
    here) or "helm" (the SPIFFE Helm chart spiffe/spire with its recommended
    layout: server in spire-server, bundle ConfigMap in spire-system). It
    becomes the cluster's provider `spire = { install = ... }`.
  EOT
  type        = map(string)
  default     = {}

  validation {
    condition     = alltrue([for i in values(var.spire_installs) : contains(["operator", "helm"], i)])
    error_message = "Each of spire_installs is \"operator\" or \"helm\"."
  }
}

provider "zerotrust" {
  alias      = "east"
  kubernetes = var.kubeconfigs.east
  spire      = contains(keys(var.spire_installs), "east") ? { install = var.spire_installs.east } : null
}

provider "zerotrust" {
  alias      = "west"
  kubernetes = var.kubeconfigs.west
  spire      = contains(keys(var.spire_installs), "west") ? { install = var.spire_installs.west } : null
}

provider "zerotrust" {
  alias      = "north"
  kubernetes = var.kubeconfigs.north
  spire      = contains(keys(var.spire_installs), "north") ? { install = var.spire_installs.north } : null
}

data "zerotrust_spire_server" "east" {
  provider = zerotrust.east
}

data "zerotrust_spire_server" "west" {
  provider = zerotrust.west
}

data "zerotrust_spire_server" "north" {
  provider = zerotrust.north
}

data "zerotrust_trust_bundle" "east" {
  provider     = zerotrust.east
  trust_domain = data.zerotrust_spire_server.east.trust_domain
  config_map = {
    namespace = data.zerotrust_spire_server.east.bundle_namespace
    name      = data.zerotrust_spire_server.east.bundle_config_map
  }
}

data "zerotrust_trust_bundle" "west" {
  provider     = zerotrust.west
  trust_domain = data.zerotrust_spire_server.west.trust_domain
  config_map = {
    namespace = data.zerotrust_spire_server.west.bundle_namespace
    name      = data.zerotrust_spire_server.west.bundle_config_map
  }
}

data "zerotrust_trust_bundle" "north" {
  provider     = zerotrust.north
  trust_domain = data.zerotrust_spire_server.north.trust_domain
  config_map = {
    namespace = data.zerotrust_spire_server.north.bundle_namespace
    name      = data.zerotrust_spire_server.north.bundle_config_map
  }
}

locals {
  # What a peer needs to federate with each cluster, keyed by cluster name.
  peer = {
    for name, s in {
      east  = { server = data.zerotrust_spire_server.east, bundle = data.zerotrust_trust_bundle.east }
      west  = { server = data.zerotrust_spire_server.west, bundle = data.zerotrust_trust_bundle.west }
      north = { server = data.zerotrust_spire_server.north, bundle = data.zerotrust_trust_bundle.north }
      } : name => {
      trust_domain            = s.server.trust_domain
      bundle_endpoint_url     = coalesce(lookup(var.bundle_endpoint_urls, name, null), s.server.bundle_endpoint_url)
      bundle_endpoint_profile = coalesce(s.server.federation_profile, "https_spiffe")
      # null: the module's default, SPIRE's spiffe://<trust domain>/spire/server.
      endpoint_spiffe_id  = s.server.federation_profile == "https_web" ? null : s.server.endpoint_spiffe_id
      trust_domain_bundle = s.bundle.spiffe_bundle
    }
  }

  # Module input for cluster <name>: every other cluster, keyed by trust domain.
  peers_of = {
    for name in keys(local.peer) : name => {
      for other, p in local.peer : p.trust_domain => {
        bundle_endpoint_url     = p.bundle_endpoint_url
        bundle_endpoint_profile = p.bundle_endpoint_profile
        endpoint_spiffe_id      = p.endpoint_spiffe_id
        trust_domain_bundle     = p.trust_domain_bundle
      } if other != name
    }
  }
}

module "east" {
  source    = "../modules/spire-federation-peer"
  providers = { zerotrust = zerotrust.east }
  peers     = local.peers_of.east
}

module "west" {
  source    = "../modules/spire-federation-peer"
  providers = { zerotrust = zerotrust.west }
  peers     = local.peers_of.west
}

module "north" {
  source    = "../modules/spire-federation-peer"
  providers = { zerotrust = zerotrust.north }
  peers     = local.peers_of.north
}

output "federations" {
  description = "Per cluster, the trust domains it federates with."
  value = {
    east  = module.east.federated_trust_domains
    west  = module.west.federated_trust_domains
    north = module.north.federated_trust_domains
  }
}
