# Federates N clusters with each other in one `terraform apply`, from ONE
# provider block: every fact comes from the clusters themselves.
#
# Per cluster, data sources read what its SPIRE installation says about itself
# (trust domain, bundle endpoint URL and SPIFFE ID, from the operator's
# ZeroTrustWorkloadIdentityManager and SpireServer `cluster` objects and its
# federation Route; where the SPIFFE Helm chart installed SPIRE, from the
# chart's server ConfigMap and federation Ingress) and its current trust
# bundle (the ConfigMap SPIRE keeps it in, checked against SPIRE itself
# through pod exec); one fleet may mix both installs (spire_install below).
# Then every cluster gets a ClusterFederatedTrustDomain for every peer,
# bootstrapped with the peer's bundle: N*(N-1) objects, no bundle copied by
# hand. Each one waits until the cluster's SPIRE server holds the peer's
# bundle (wait_for_bundle), so when the apply ends the mesh is federated, not
# merely requested.
#
# The released operator publishes a cluster's bundle endpoint only through an
# OpenShift Route, the chart through its federation Ingress; where there is
# none (plain Kubernetes), or peers reach the endpoint at another address
# (`make demo`, whose Ingress hosts resolve nowhere), give the URL in
# var.clusters.
#
# Adding a cluster is one more entry in var.clusters: the plan creates its
# 2*N new federations and its ClusterSPIFFEID, and updates every other
# cluster's ClusterSPIFFEID in place (federates_with gains it). A later CA rotation changes the bundles the data sources
# read but plans nothing: the bundle is bootstrap input, and SPIRE keeps
# itself current from the peers' bundle endpoints. When SPIRE cannot (a lost
# bundle, a forced rotation, a rebuilt cluster), the plan shows it as
# `spire_trust` changing to "federated", and the apply seeds SPIRE with the
# bundle read here (see the runbook in the guide "Federating N clusters").

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
    cluster_ca_certificate (PEM). bundle_endpoint_url is where peers reach the
    cluster's SPIRE bundle endpoint: needed when the cluster states none (no
    operator federation Route, no chart federation Ingress), and when set it
    wins over the one the cluster states (for an endpoint peers reach by
    another address than its Route's or Ingress's host). trust_domain is the
    cluster's trust domain, read from the cluster when unset: give it (and
    bundle_endpoint_url) so that the peers keep federating with the cluster
    while it does not answer (see "A cluster that does not answer" below).
    `make demo` writes demo/state/clusters.json, whose entries give
    kubeconfig, context, bundle_endpoint_url and spire_install. leaving = true takes a cluster out of the mesh in
    one apply (its federations on both sides and its ClusterSPIFFEID are
    destroyed, the peers stop federating with it) while the provider can
    still reach it to do so; remove its entry in a later apply.
    spire_install says how the cluster's SPIRE was installed: "operator"
    (the OpenShift Zero Trust Workload Identity Manager) or "helm" (the
    SPIFFE Helm chart spiffe/spire with its recommended layout: server in
    spire-server, bundle ConfigMap in spire-system); unset means the
    provider's default, "operator". It becomes the cluster's
    `spire = { install = ... }` in the provider block, so every other SPIRE
    setting of the cluster (namespace, class_name, server pod, bundle
    namespace) follows that install's defaults, and one fleet may mix both.
  EOT
  type = map(object({
    config_path            = optional(string)
    config_context         = optional(string)
    host                   = optional(string)
    token                  = optional(string)
    cluster_ca_certificate = optional(string)
    bundle_endpoint_url    = optional(string)
    trust_domain           = optional(string)
    spire_install          = optional(string)
    leaving                = optional(bool, false)
  }))

  validation {
    condition     = length([for c in values(var.clusters) : c if !c.leaving]) >= 2
    error_message = "Federation needs at least two clusters."
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

variable "workloads" {
  description = <<-EOT
    Which workloads federate: on every cluster, a ClusterSPIFFEID registers the
    pods carrying pod_labels (in every namespace spire-controller-manager does
    not ignore) with spiffe_id_template, their entries federating with every
    peer. null leaves the clusters' own ClusterSPIFFEIDs alone (then make them
    federate yourself, or with zerotrust_cluster_spiffe_id_federation).
  EOT
  type = object({
    name               = optional(string, "zerotrust-federated-workloads")
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

locals {
  # The clusters of the mesh: every one of var.clusters not leaving it.
  members = { for name, c in var.clusters : name => c if !c.leaving }
}

# A cluster that does not answer: with the provider's on_unreachable
# ("warn", the default) its data sources below read nothing (null values,
# one warning naming the cluster) and its objects keep the state of the last
# run. Its facts then come from var.clusters (trust_domain,
# bundle_endpoint_url), so the peers' federations with it and their
# ClusterSPIFFEIDs' federates_with stay as they are: nothing is torn down or
# narrowed because a peer is down, and the first run that reaches it again
# plans whatever changed meanwhile.

# What a peer needs to federate with each cluster.
data "zerotrust_spire_server" "this" {
  for_each = local.members

  cluster = each.key
}

# Each cluster's trust bundle, from the ConfigMap its SPIRE server keeps
# current, in the namespace its install publishes it to (the chart's
# recommended layout keeps it in spire-system, apart from the server); not
# read for a cluster that did not answer (its trust_domain is null): the
# bundle is bootstrap input, which an existing federation ignores.
data "zerotrust_trust_bundle" "this" {
  for_each = local.answering

  cluster      = each.key
  trust_domain = each.value.trust_domain
  config_map = {
    namespace = each.value.bundle_namespace
    name      = each.value.bundle_config_map
  }
}

# The same bundle asked from the SPIRE server itself (pod exec of
# `spire-server bundle show` in the server pod of the cluster's install), to
# show that the ConfigMap the federations are bootstrapped from is current.
data "zerotrust_trust_bundle" "from_spire" {
  for_each = local.answering

  cluster      = each.key
  trust_domain = each.value.trust_domain
  spire_server = {}
}

locals {
  # The clusters whose SPIRE installation was read in this run.
  answering = { for name, s in data.zerotrust_spire_server.this : name => s if s.trust_domain != null }
  # Each cluster's trust domain: as its installation states it, else (it did
  # not answer) as var.clusters gives it.
  trust_domains = {
    for name, s in data.zerotrust_spire_server.this :
    name => s.trust_domain != null ? s.trust_domain : var.clusters[name].trust_domain
  }
  # The ID its bundle endpoint presents: read, else SPIRE's default for the
  # trust domain.
  endpoint_spiffe_ids = {
    for name, s in data.zerotrust_spire_server.this :
    name => s.endpoint_spiffe_id != null ? s.endpoint_spiffe_id : (
      local.trust_domains[name] == null ? null : provider::zerotrust::spiffe_id(local.trust_domains[name], "spire", "server")
    )
  }
  # Where peers fetch each cluster's bundle: the one given in var.clusters,
  # else the one the cluster states (the operator's federation Route, the
  # chart's federation Ingress).
  bundle_endpoint_urls = {
    for name, s in data.zerotrust_spire_server.this :
    name => var.clusters[name].bundle_endpoint_url != null ? var.clusters[name].bundle_endpoint_url : s.bundle_endpoint_url
  }
  # The endpoint's profile as the SpireServer states it; https_spiffe (the
  # operator's default) when it states none.
  federation_profiles = {
    for name, s in data.zerotrust_spire_server.this :
    name => s.federation_profile != null ? s.federation_profile : "https_spiffe"
  }

  # Every ordered pair of distinct clusters: "east->west" means that east
  # federates with (trusts) west.
  pairs = {
    for pair in setproduct(keys(local.members), keys(local.members)) :
    "${pair[0]}->${pair[1]}" => { cluster = pair[0], peer = pair[1] }
    if pair[0] != pair[1]
  }
}

resource "zerotrust_federated_trust_domain" "peer" {
  for_each = local.pairs

  cluster             = each.value.cluster
  trust_domain        = local.trust_domains[each.value.peer]
  bundle_endpoint_url = local.bundle_endpoint_urls[each.value.peer]
  bundle_endpoint_profile = {
    type = local.federation_profiles[each.value.peer]
    # Only the https_spiffe profile authenticates the endpoint by its SPIFFE ID.
    endpoint_spiffe_id = (local.federation_profiles[each.value.peer] == "https_spiffe" ?
    local.endpoint_spiffe_ids[each.value.peer] : null)
  }
  trust_domain_bundle = try(data.zerotrust_trust_bundle.this[each.value.peer].spiffe_bundle, null)

  # Done means SPIRE holds the peer's bundle (asked through pod exec of
  # `spire-server bundle list`), not only that the object exists.
  wait_for_bundle = true
  # delete_bundle_on_destroy (default true): unfederating also removes the
  # peer's bundle from SPIRE, which otherwise keeps it, so workloads stop
  # trusting the peer. Set false to keep it, for example when another
  # mechanism takes the federation over.

  lifecycle {
    precondition {
      condition     = local.trust_domains[each.value.peer] != null
      error_message = "Cluster ${each.value.peer} did not answer and var.clusters[\"${each.value.peer}\"].trust_domain is unset: give its trust domain, so that its peers keep federating with it."
    }
    precondition {
      condition     = local.bundle_endpoint_urls[each.value.peer] != null
      error_message = "Cluster ${each.value.peer} states no bundle endpoint URL (no federation Route or Ingress): set var.clusters[\"${each.value.peer}\"].bundle_endpoint_url."
    }
  }
}

# The last step of the bootstrap: the workloads' registration entries
# federate with every peer, so the workloads accept the peers' SVIDs. One
# ClusterSPIFFEID per cluster; SPIRE refuses entries federating with a trust
# domain whose bundle it does not hold, so each depends on its cluster's
# federations (which already waited for SPIRE to hold the bundles) and itself
# waits until the selected pods' entries carry the federation. Adding a
# cluster adds it to every other cluster's federates_with: one apply.
resource "zerotrust_cluster_spiffe_id" "workloads" {
  for_each = var.workloads == null ? {} : local.members

  cluster            = each.key
  name               = var.workloads.name
  spiffe_id_template = var.workloads.spiffe_id_template
  pod_selector = {
    match_labels = var.workloads.pod_labels
  }
  federates_with = [
    for f in zerotrust_federated_trust_domain.peer : f.trust_domain if f.cluster == each.key
  ]
}

output "trust_domains" {
  description = "Each cluster's trust domain, as its SPIRE installation states it (or var.clusters, while it does not answer)."
  value       = local.trust_domains
}

output "federations" {
  description = "Per cluster, the trust domains it now federates with."
  value = {
    for name in keys(local.members) : name => sort([
      for f in zerotrust_federated_trust_domain.peer : f.trust_domain if f.cluster == name
    ])
  }
}

output "bundle_endpoints" {
  description = "Where each cluster's peers fetch its bundle from now on."
  value       = local.bundle_endpoint_urls
}

output "config_map_bundles_current" {
  # On an operator cluster SPIRE notifies its k8sbundle notifier when it
  # prepares an authority, not when it revokes one, so the ConfigMap keeps a
  # revoked authority for a while (the chart's BundlePublisher rewrites it at
  # a revoke); the data source leaves it out (config_map.check_spire), so this
  # stays true after a revoke on either install.
  description = "Per cluster, whether the bundle ConfigMap holds the X.509 authorities the SPIRE server itself reports."
  value = {
    for name, b in data.zerotrust_trust_bundle.this :
    name => sort(b.x509_fingerprints_sha256) == sort(data.zerotrust_trust_bundle.from_spire[name].x509_fingerprints_sha256)
  }
}

# The mesh's health, asked from the clusters (their SPIRE servers and the
# peers' bundle endpoints), never an error: whatever is wrong is a line of
# `problems`. It depends on the federations and the ClusterSPIFFEIDs, so
# Terraform reads it after they are applied while one of them has changes
# pending, and at plan time when none has: the plan of a converged mesh is
# then empty (`terraform plan -detailed-exitcode` exits 0), which it would
# not be with this data source inside the check block (Terraform plans a
# read of a check block's own data source on every run). See "Scheduled
# drift detection" in the guide "Federating N clusters".
data "zerotrust_federation_status" "mesh" {
  depends_on = [zerotrust_federated_trust_domain.peer, zerotrust_cluster_spiffe_id.workloads]
}

# Proves the mesh works, on every plan and apply after this one: each cluster's
# SPIRE server has every federation relationship and bundle, and every peer's
# bundle endpoint serves the bundle SPIRE holds, in both directions. A failed
# check is a warning listing each problem (cluster, trust domain, what is
# wrong); it does not stop the run.
check "federation_healthy" {
  assert {
    condition     = data.zerotrust_federation_status.mesh.ok
    error_message = join("\n", data.zerotrust_federation_status.mesh.problems)
  }
}
