# Adopts a federation that already runs, then grows it.
#
# The clusters in var.adopted were federated by hand (the runbook: SpireServer
# federation sections, ClusterFederatedTrustDomains, `spire-server bundle
# set`). One `terraform query -generate-config-out=adopted.tf` lists their
# objects (adopt.tfquery.hcl) and writes a resource block and an import block
# for each; one `terraform apply` imports them all without changing anything
# on the clusters, and the next plan is empty.
#
# From then on the mesh grows from var.clusters: a cluster that is not in
# var.adopted is federated here with every other cluster, in both directions,
# so adding a cluster is one more map entry.
#
# A cluster's SPIRE may come from the OpenShift operator or from the SPIFFE
# Helm chart (spire_install), in any mix. zerotrust_spire_federation edits
# the operator's SpireServer and cannot run on a chart install, so a grown
# chart cluster gets only its ClusterFederatedTrustDomains (the chart's
# values configure its server's bundle endpoint).

terraform {
  required_providers {
    zerotrust = {
      source = "ztfabric/zerotrust"
    }
  }
}

variable "clusters" {
  description = <<-EOT
    Every cluster of the mesh, keyed by a name of your choice: a kubeconfig
    (config_path + config_context); the URL where peers reach its SPIRE bundle
    endpoint, needed where the cluster states none (no operator federation
    Route, no chart federation Ingress) and winning over the one it states
    when given; and spire_install, how its SPIRE was installed: "operator"
    (the OpenShift Zero Trust Workload Identity Manager, the default when
    unset) or "helm" (the SPIFFE Helm chart spiffe/spire with its recommended
    layout), which becomes the cluster's `spire = { install = ... }`.
  EOT
  type = map(object({
    config_path         = string
    config_context      = string
    bundle_endpoint_url = optional(string)
    spire_install       = optional(string)
  }))

  validation {
    condition     = alltrue([for c in values(var.clusters) : contains(["operator", "helm"], coalesce(c.spire_install, "operator"))])
    error_message = "spire_install is \"operator\" or \"helm\"."
  }
}

variable "adopted" {
  description = "Keys of var.clusters whose federation was adopted with `terraform query` (their blocks are in adopted.tf)."
  type        = set(string)
  default     = []

  validation {
    condition     = length(var.adopted) > 0
    error_message = "Name the clusters whose federation already runs."
  }
}

provider "zerotrust" {
  clusters = {
    for name, c in var.clusters : name => {
      config_path    = c.config_path
      config_context = c.config_context
      spire          = c.spire_install == null ? null : { install = c.spire_install }
    }
  }
}

data "zerotrust_spire_server" "this" {
  for_each = toset(keys(var.clusters))

  cluster = each.key
}

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
  grown = setsubtract(keys(var.clusters), var.adopted)

  # The URL given, else the one the cluster states.
  bundle_endpoint_urls = {
    for name, s in data.zerotrust_spire_server.this :
    name => var.clusters[name].bundle_endpoint_url != null ? var.clusters[name].bundle_endpoint_url : s.bundle_endpoint_url
  }
  # The ID each endpoint presents: read, else SPIRE's default.
  endpoint_spiffe_ids = {
    for name, s in data.zerotrust_spire_server.this :
    name => s.endpoint_spiffe_id != null ? s.endpoint_spiffe_id : provider::zerotrust::spiffe_id(s.trust_domain, "spire", "server")
  }
  # The grown clusters the operator installed: only their SpireServer can
  # state federations (zerotrust_spire_federation).
  grown_operator = toset([for name in local.grown : name if coalesce(var.clusters[name].spire_install, "operator") == "operator"])

  # Ordered pairs with at least one grown cluster: the adopted pairs are in
  # adopted.tf already. "a->b" means a federates with (trusts) b.
  pairs = {
    for pair in setproduct(keys(var.clusters), keys(var.clusters)) :
    "${pair[0]}->${pair[1]}" => { cluster = pair[0], peer = pair[1] }
    if pair[0] != pair[1] && (contains(local.grown, pair[0]) || contains(local.grown, pair[1]))
  }
}

resource "zerotrust_federated_trust_domain" "grown" {
  for_each = local.pairs

  cluster             = each.value.cluster
  trust_domain        = data.zerotrust_spire_server.this[each.value.peer].trust_domain
  bundle_endpoint_url = local.bundle_endpoint_urls[each.value.peer]
  bundle_endpoint_profile = {
    type               = "https_spiffe"
    endpoint_spiffe_id = local.endpoint_spiffe_ids[each.value.peer]
  }
  trust_domain_bundle = data.zerotrust_trust_bundle.this[each.value.peer].spiffe_bundle
  wait_for_bundle     = true
  # delete_bundle_on_destroy defaults to true: destroying a grown federation
  # also removes the peer's bundle from SPIRE, revoking the workloads' trust.
}

# A grown operator cluster's SpireServer serves its bundle endpoint. Its
# relationships are the ClusterFederatedTrustDomains above, so it lists no
# federates_with: SPIRE would let such an entry override the
# ClusterFederatedTrustDomain of the same peer, and a plan that declares both
# is refused. Not on a chart install: there is no SpireServer to edit.
resource "zerotrust_spire_federation" "grown" {
  for_each = local.grown_operator

  cluster = each.key
  bundle_endpoint = {
    profile = "https_spiffe"
  }
}

output "federations" {
  description = "Per cluster, the trust domains it federates with through objects this configuration created."
  value = {
    for name in keys(var.clusters) : name => sort([
      for f in zerotrust_federated_trust_domain.grown : f.trust_domain if f.cluster == name
    ])
  }
}
