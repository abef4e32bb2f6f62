# Federates N clusters whose SPIRE servers cannot reach each other (no bundle
# endpoint is reachable from a peer: segmented or regulated networks), while
# the machine running Terraform reaches every cluster's API server. Terraform
# is the courier: each run reads every cluster's current bundle from that
# cluster's own SPIRE server (pod exec of `spire-server bundle show`) and sets
# it in every peer's SPIRE server (`spire-server bundle set`). No bundle
# endpoint is ever fetched, and no ClusterFederatedTrustDomain is made.
#
# SPIRE never refreshes these bundles by itself: the trust is as fresh as the
# last apply. Run an apply at least every sixth of the shortest `ca_ttl` of
# the clusters (every 4h at SPIRE's default 24h) so that every peer picks up a
# prepared CA before its SPIRE server activates it; see "When SPIRE servers
# cannot reach each other" in the guide "Federating N clusters". A plan
# shows a prepared CA as an update of the peers' zerotrust_spire_bundle as
# soon as its cluster publishes it.

terraform {
  required_providers {
    zerotrust = {
      source = "ztfabric/zerotrust"
    }
  }
}

variable "clusters" {
  description = <<-EOT
    The clusters to federate, keyed by a name of your choice: each cluster's
    trust domain (as its SPIRE server is configured) and either a kubeconfig
    (config_path + config_context) or host + token + cluster_ca_certificate
    (PEM). The trust domains are given, not read, so that a plan can go on
    while a cluster does not answer. spire_install says how the cluster's
    SPIRE was installed: "operator" (the OpenShift Zero Trust Workload
    Identity Manager, the default when unset) or "helm" (the SPIFFE Helm
    chart spiffe/spire with its recommended layout, server in spire-server);
    it becomes the cluster's `spire = { install = ... }` in the provider
    block, so the SPIRE server pod asked through pod exec and the
    ClusterSPIFFEIDs' class follow that install, and one fleet may mix both.
  EOT
  type = map(object({
    trust_domain           = string
    config_path            = optional(string)
    config_context         = optional(string)
    host                   = optional(string)
    token                  = optional(string)
    cluster_ca_certificate = optional(string)
    spire_install          = optional(string)
  }))

  validation {
    condition     = length(var.clusters) >= 2
    error_message = "Federation needs at least two clusters."
  }
  validation {
    condition     = alltrue([for c in values(var.clusters) : (c.config_path != null) != (c.host != null)])
    error_message = "Give each cluster either config_path (with config_context) or host (with token and cluster_ca_certificate)."
  }
  validation {
    condition     = length(distinct([for c in values(var.clusters) : c.trust_domain])) == length(var.clusters)
    error_message = "Each cluster needs its own trust_domain."
  }
  validation {
    condition     = alltrue([for c in values(var.clusters) : contains(["operator", "helm"], coalesce(c.spire_install, "operator"))])
    error_message = "spire_install is \"operator\" or \"helm\"."
  }
}

variable "workloads" {
  description = <<-EOT
    Which workloads federate: on every cluster, a ClusterSPIFFEID registers the
    pods carrying pod_labels with spiffe_id_template, their entries federating
    with every peer. null leaves the clusters' own ClusterSPIFFEIDs alone.
  EOT
  type = object({
    name               = optional(string, "zerotrust-courier-workloads")
    pod_labels         = map(string)
    spiffe_id_template = optional(string, "spiffe://{{ .TrustDomain }}/ns/{{ .PodMeta.Namespace }}/sa/{{ .PodSpec.ServiceAccountName }}")
  })
  default = null
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

# Each cluster's current bundle, asked from its own SPIRE server through pod
# exec: never from a bundle endpoint, which peers could not reach anyway. A
# cluster that does not answer is a warning naming it, and its bundle is
# null: the peers keep the bundle of it they hold (see zerotrust_spire_bundle
# below), and the run carries the other clusters' bundles as usual.
data "zerotrust_trust_bundle" "this" {
  for_each = var.clusters

  cluster        = each.key
  trust_domain   = each.value.trust_domain
  spire_server   = {}
  on_unreachable = "warn"
}

locals {
  # Every ordered pair of distinct clusters: "east->west" means that east
  # holds (trusts) west's bundle.
  pairs = {
    for pair in setproduct(keys(var.clusters), keys(var.clusters)) :
    "${pair[0]}->${pair[1]}" => { cluster = pair[0], peer = pair[1] }
    if pair[0] != pair[1]
  }
}

# N*(N-1) bundles: each peer's bundle in each cluster's SPIRE server. A
# bundle whose authorities did not change plans nothing; a peer's prepared or
# new CA plans an update; a bundle SPIRE lost plans setting it again. While a
# cluster does not answer, the bundles it holds and the copies of its own
# bundle stay as the last apply set them (a null bundle keeps the last one).
resource "zerotrust_spire_bundle" "peer" {
  for_each = local.pairs

  cluster      = each.value.cluster
  trust_domain = var.clusters[each.value.peer].trust_domain
  bundle       = data.zerotrust_trust_bundle.this[each.value.peer].spiffe_bundle
}

# The workloads' entries federate with every peer. SPIRE refuses an entry
# federating with a trust domain whose bundle it does not hold, so each
# ClusterSPIFFEID depends on its cluster's bundles.
resource "zerotrust_cluster_spiffe_id" "workloads" {
  for_each = var.workloads == null ? {} : var.clusters

  cluster            = each.key
  name               = var.workloads.name
  spiffe_id_template = var.workloads.spiffe_id_template
  pod_selector = {
    match_labels = var.workloads.pod_labels
  }
  federates_with = [
    for b in zerotrust_spire_bundle.peer : b.trust_domain if b.cluster == each.key
  ]
}

output "trust_domains" {
  description = "Each cluster's trust domain."
  value       = { for name, c in var.clusters : name => c.trust_domain }
}

output "carried" {
  description = "Per cluster, the trust domains whose bundles Terraform keeps in its SPIRE server."
  value = {
    for name in keys(var.clusters) : name => sort([
      for b in zerotrust_spire_bundle.peer : b.trust_domain if b.cluster == name
    ])
  }
}

# The courier's health, asked from every cluster's SPIRE server (no endpoint
# is fetched: there is none to reach), never an error: whatever is wrong is a
# line of `problems`. It depends on the bundles and the ClusterSPIFFEIDs, so
# Terraform reads it after they are applied while one of them has changes
# pending, and at plan time when none has: the plan of a converged fleet is
# then empty (`terraform plan -detailed-exitcode` exits 0), which it would
# not be with this data source inside the check block (Terraform plans a
# read of a check block's own data source on every run).
data "zerotrust_federation_status" "courier" {
  check_endpoints = false
  carried_bundles = [for b in zerotrust_spire_bundle.peer : { cluster = b.cluster, trust_domain = b.trust_domain }]

  depends_on = [zerotrust_spire_bundle.peer, zerotrust_cluster_spiffe_id.workloads]
}

# On every plan and apply after this one: each cluster's SPIRE server holds
# every bundle Terraform carries to it, and no federation relationship would
# overwrite one. A failed check is a warning listing each problem; it does
# not stop the run.
check "courier_healthy" {
  assert {
    condition     = data.zerotrust_federation_status.courier.ok
    error_message = join("\n", data.zerotrust_federation_status.courier.problems)
  }
}
