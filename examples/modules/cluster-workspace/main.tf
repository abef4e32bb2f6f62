# One cluster's side of a federation mesh run as one Terraform workspace per
# cluster (HCP Terraform / Terraform Enterprise workspaces, or separate state
# directories): the caller's zerotrust provider reaches this cluster only.
#
# The module reads what peers need to federate with this cluster (trust
# domain, bundle endpoint URL and SPIFFE ID, from the SPIRE installation; the
# current trust bundle, from the ConfigMap SPIRE keeps it in) and publishes it
# as the output `federation`. It federates this cluster with var.peers, whose
# values have exactly that output's shape, so another workspace's output plugs
# in unchanged:
#
#   module "cluster" {
#     source = "./modules/cluster-workspace"
#     peers = {
#       west = data.tfe_outputs.west.nonsensitive_values.federation
#       north = data.terraform_remote_state.north.outputs.federation
#     }
#   }
#
# No workspace reads or writes another cluster: what it knows about a peer is
# that peer's published facts, and the peer's SPIRE refreshes its bundle from
# the peer's bundle endpoint afterwards.
#
# A https_spiffe peer whose `bundle` is still null (its workspace has not
# applied yet; a variable set can say in advance only its trust domain, URL
# and SPIFFE ID) is not federated yet but listed in `waiting_for`: SPIRE could
# not authenticate that peer's endpoint without a bundle, so a federation
# without one would only make SPIRE retry and wait_for_bundle time out. The
# next run after the peer's first apply federates it.
#
# Workloads: a ClusterSPIFFEID gives the Pods labelled var.workload_label the
# SPIFFE ID spiffe://<trust domain>/ns/<namespace>/sa/<service account> and
# federates their
# entries with exactly the peers federated here; a peer in `waiting_for` is
# added by the run that federates it. The apply ends when SPIRE's entries for
# those Pods carry every federation. workload_label = null leaves the
# cluster's workload identities to someone else.
#
# Removing a peer from var.peers drops it from the ClusterSPIFFEID, deletes its
# ClusterFederatedTrustDomain and, with delete_bundle_on_destroy (default),
# its bundle from this cluster's SPIRE server: that is the revocation.
#
# A peer whose cluster does not answer changes nothing here: its facts come
# from its workspace's output. When this workspace's own cluster does not
# answer (the provider's on_unreachable = "warn", the default), its objects
# keep their state and zerotrust_spire_server reads null; the run then fails
# on the `federation` output's precondition, naming the cause, rather than
# publish null facts, on which the peers' next runs would replace or drop
# their federations with this cluster.

terraform {
  required_version = ">= 1.8"

  required_providers {
    zerotrust = {
      source = "ztfabric/zerotrust"
    }
  }
}

# What peers need to federate with this cluster.
data "zerotrust_spire_server" "this" {}

# This cluster's current trust bundle, from the ConfigMap its SPIRE server
# keeps current, in the namespace its install publishes it to (the SPIFFE
# Helm chart's recommended layout keeps it in spire-system, apart from the
# server): the bootstrap bundle peers federate with.
data "zerotrust_trust_bundle" "this" {
  # Not read while the cluster does not answer (its trust domain is null).
  count = data.zerotrust_spire_server.this.trust_domain == null ? 0 : 1

  trust_domain = data.zerotrust_spire_server.this.trust_domain
  config_map = {
    namespace = data.zerotrust_spire_server.this.bundle_namespace
    name      = data.zerotrust_spire_server.this.bundle_config_map
  }
}

locals {
  trust_domain = data.zerotrust_spire_server.this.trust_domain
  # The URL given, else the one the cluster states (the operator's federation
  # Route, the chart's federation Ingress).
  bundle_endpoint_url = (var.bundle_endpoint_url != null ? var.bundle_endpoint_url :
  data.zerotrust_spire_server.this.bundle_endpoint_url)
  # https_web endpoints present a Web PKI certificate, not an SVID: peers
  # need neither a SPIFFE ID nor a bundle to authenticate them.
  web_profile = data.zerotrust_spire_server.this.federation_profile == "https_web"

  # Peers an https_spiffe federation can authenticate (their bundle is
  # known) and https_web peers; the others wait for their workspace's first
  # apply.
  ready = { for name, p in var.peers : name => p if p.bundle != null || p.endpoint_spiffe_id == null }
}

resource "zerotrust_federated_trust_domain" "peer" {
  for_each = local.ready

  trust_domain        = each.value.trust_domain
  bundle_endpoint_url = each.value.bundle_endpoint_url
  bundle_endpoint_profile = {
    type               = each.value.endpoint_spiffe_id == null ? "https_web" : "https_spiffe"
    endpoint_spiffe_id = each.value.endpoint_spiffe_id
  }
  # Bootstrap only: read once at creation; SPIRE refreshes the bundle from
  # the peer's endpoint afterwards, so the peer's CA rotations plan nothing.
  trust_domain_bundle = each.value.bundle
  class_name          = var.class_name

  # Done means SPIRE holds the peer's bundle (asked through pod exec of
  # `spire-server bundle list`), not only that the object exists.
  wait_for_bundle          = var.wait_for_bundle
  delete_bundle_on_destroy = var.delete_bundle_on_destroy

  lifecycle {
    precondition {
      condition     = each.value.trust_domain != local.trust_domain
      error_message = "Peer ${each.key} has this cluster's own trust domain ${coalesce(local.trust_domain, "(not read)")}: a cluster does not federate with itself."
    }
  }
}

# The identity of this cluster's workloads, federated with every peer
# federated above.
resource "zerotrust_cluster_spiffe_id" "workloads" {
  count = var.workload_label == null ? 0 : 1

  name               = var.workload_identity_name
  spiffe_id_template = "spiffe://{{ .TrustDomain }}/ns/{{ .PodMeta.Namespace }}/sa/{{ .PodSpec.ServiceAccountName }}"
  pod_selector = {
    match_expressions = [{ key = var.workload_label, operator = "Exists" }]
  }
  class_name = var.class_name
  # Read from the federations, so they come first: SPIRE refuses an entry
  # that federates with a trust domain whose bundle it does not hold, and
  # each federation is done once SPIRE holds the peer's bundle
  # (wait_for_bundle). Peers still in waiting_for are not among them.
  federates_with = [for f in zerotrust_federated_trust_domain.peer : f.trust_domain]
}

# Whether every federation of this cluster works, asked from the cluster's
# SPIRE server and the peers' bundle endpoints, never an error: whatever is
# wrong is a line of `problems`. It depends on the federations and the
# ClusterSPIFFEID, so Terraform reads it after they are applied while one of
# them has changes pending, and at plan time when none has: the plan of a
# converged workspace is then empty (`terraform plan -detailed-exitcode`
# exits 0, as HCP Terraform's drift detection needs), which it would not be
# with this data source inside the check block.
data "zerotrust_federation_status" "this" {
  depends_on = [zerotrust_federated_trust_domain.peer, zerotrust_cluster_spiffe_id.workloads]
}

# On every plan and apply: SPIRE has each relationship and bundle, and each
# peer's endpoint serves the bundle SPIRE holds. A failed check is a warning
# listing each problem.
check "federation_healthy" {
  assert {
    condition     = data.zerotrust_federation_status.this.ok
    error_message = join("\n", data.zerotrust_federation_status.this.problems)
  }
}
