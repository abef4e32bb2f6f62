# Quick start: federate two clusters and the workloads on them, in one
# `terraform apply`. The same configuration serves every SPIRE install: each
# cluster says how its SPIRE was installed (`spire_install`), "operator" for
# the OpenShift Zero Trust Workload Identity Manager, "helm" for the SPIFFE
# Helm chart (EKS, GKE, AKS), so two OpenShift clusters, two chart clusters
# or one of each differ only in terraform.tfvars (see operator.tfvars,
# helm.tfvars and mixed.tfvars beside this file).
#
# What one apply does:
#   1. reads, from each cluster, its trust domain and bundle endpoint
#      (zerotrust_spire_server) and its current trust bundle
#      (zerotrust_trust_bundle, the ConfigMap SPIRE keeps it in);
#   2. on each cluster, creates a ClusterFederatedTrustDomain for the other,
#      bootstrapped with the other's bundle, and waits until the cluster's
#      SPIRE server holds that bundle (wait_for_bundle);
#   3. on each cluster, creates a ClusterSPIFFEID that gives the pods
#      labelled var.workloads.pod_labels the SPIFFE ID
#      spiffe://<trust domain>/ns/<namespace>/sa/<service account>, federated
#      with the other cluster, and waits until SPIRE's entries of those pods
#      carry the federation. Their workloads then verify each other's SVIDs.

terraform {
  required_providers {
    zerotrust = {
      source = "ztfabric/zerotrust"
    }
  }
}

variable "clusters" {
  description = <<-EOT
    The two clusters, keyed by a name of your choice. Per cluster: the
    kubeconfig (config_path, default ~/.kube/config) and its context;
    spire_install, "operator" (default) or "helm"; bundle_endpoint_url only
    where the cluster publishes no bundle endpoint the other can reach (the
    operator publishes it through its federation Route, the chart through
    its federation Ingress) or the other reaches it at another address.
  EOT
  type = map(object({
    config_path         = optional(string, "~/.kube/config")
    config_context      = string
    spire_install       = optional(string, "operator")
    bundle_endpoint_url = optional(string)
  }))

  validation {
    condition     = length(var.clusters) == 2
    error_message = "The quick start federates exactly two clusters; examples/n-cluster-mesh federates any number."
  }
  validation {
    condition     = alltrue([for c in values(var.clusters) : contains(["operator", "helm"], c.spire_install)])
    error_message = "spire_install is \"operator\" or \"helm\"."
  }
}

variable "workloads" {
  description = "The pods that federate, on both clusters: those carrying pod_labels."
  type = object({
    pod_labels = map(string)
  })
  default = {
    pod_labels = { "zerotrust.example/workload" = "app" }
  }
}

provider "zerotrust" {
  clusters = {
    for name, c in var.clusters : name => {
      config_path    = c.config_path
      config_context = c.config_context
      # Every other SPIRE setting of the cluster (namespaces, class, server
      # pod) follows its install's defaults.
      spire = { install = c.spire_install }
    }
  }
}

locals {
  # Each cluster's peer: the other one.
  peer = { for name in keys(var.clusters) : name => one([for other in keys(var.clusters) : other if other != name]) }
}

# What the peer needs to federate with each cluster, as its SPIRE install states it.
data "zerotrust_spire_server" "this" {
  for_each = var.clusters

  cluster = each.key
}

# Each cluster's current trust bundle, from the ConfigMap SPIRE publishes it to.
data "zerotrust_trust_bundle" "this" {
  for_each = var.clusters

  cluster      = each.key
  trust_domain = data.zerotrust_spire_server.this[each.key].trust_domain
  config_map = {
    namespace = data.zerotrust_spire_server.this[each.key].bundle_namespace
    name      = data.zerotrust_spire_server.this[each.key].bundle_config_map
  }
}

locals {
  server = data.zerotrust_spire_server.this
  # Where each cluster's bundle endpoint is reached: the URL given, else the
  # one the cluster states.
  endpoint_url = {
    for name, s in local.server : name => var.clusters[name].bundle_endpoint_url != null ? var.clusters[name].bundle_endpoint_url : s.bundle_endpoint_url
  }
}

# On each cluster, the federation with the other, bootstrapped with the
# other's bundle: SPIRE refreshes it from the endpoint from then on.
resource "zerotrust_federated_trust_domain" "peer" {
  for_each = var.clusters

  cluster             = each.key
  trust_domain        = local.server[local.peer[each.key]].trust_domain
  bundle_endpoint_url = local.endpoint_url[local.peer[each.key]]
  bundle_endpoint_profile = {
    type = coalesce(local.server[local.peer[each.key]].federation_profile, "https_spiffe")
    # Only the https_spiffe profile authenticates the endpoint by its SPIFFE ID.
    endpoint_spiffe_id = (coalesce(local.server[local.peer[each.key]].federation_profile, "https_spiffe") == "https_spiffe" ?
    local.server[local.peer[each.key]].endpoint_spiffe_id : null)
  }
  trust_domain_bundle = data.zerotrust_trust_bundle.this[local.peer[each.key]].spiffe_bundle
  wait_for_bundle     = true

  lifecycle {
    precondition {
      condition     = local.endpoint_url[local.peer[each.key]] != null
      error_message = "Cluster ${local.peer[each.key]} states no bundle endpoint URL (no federation Route or Ingress): set its bundle_endpoint_url in var.clusters."
    }
  }
}

# On each cluster, the workloads' identities, federated with the other
# cluster: created after the federation, since SPIRE refuses entries that
# federate with a trust domain whose bundle it does not hold.
resource "zerotrust_cluster_spiffe_id" "workloads" {
  for_each = var.clusters

  cluster            = each.key
  name               = "zerotrust-federated-workloads"
  spiffe_id_template = "spiffe://{{ .TrustDomain }}/ns/{{ .PodMeta.Namespace }}/sa/{{ .PodSpec.ServiceAccountName }}"
  pod_selector = {
    match_labels = var.workloads.pod_labels
  }
  federates_with = [zerotrust_federated_trust_domain.peer[each.key].trust_domain]
}

# The trust between the clusters as SPIRE holds it, asked from both SPIRE
# servers and bundle endpoints when Terraform reads it (at plan time:
# `terraform apply -refresh-only` reads it again after the apply).
data "zerotrust_federation_status" "fleet" {}

output "trust_domains" {
  description = "Each cluster's trust domain."
  value       = { for name, s in local.server : name => s.trust_domain }
}

output "workloads" {
  description = "Per cluster, the SPIFFE ID template of its federated pods and the trust domains whose SVIDs they accept."
  value = {
    for name, w in zerotrust_cluster_spiffe_id.workloads : name => {
      spiffe_id_template = w.spiffe_id_template
      trusts             = w.federates_with
    }
  }
}

output "trust_graph" {
  description = "Who trusts whom, and whether it works, as a Mermaid flowchart (terraform output -raw trust_graph)."
  value       = data.zerotrust_federation_status.fleet.mermaid
}

output "federation_ok" {
  description = "Whether every federation of both clusters works; federation_problems says what does not."
  value       = data.zerotrust_federation_status.fleet.ok
}

output "federation_problems" {
  description = "What is wrong, one line per problem; empty when federation_ok."
  value       = data.zerotrust_federation_status.fleet.problems
}
