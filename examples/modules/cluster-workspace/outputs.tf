output "federation" {
  description = <<-EOT
    What peers need to federate with this cluster, in the shape of their
    var.peers values: hand it over with tfe_outputs (`nonsensitive_values`),
    terraform_remote_state or a variable set. `bundle` is the current trust
    bundle (public keys, no secret); endpoint_spiffe_id is null for an
    https_web endpoint, which needs no bundle either.
  EOT
  value = {
    trust_domain        = local.trust_domain
    bundle_endpoint_url = local.bundle_endpoint_url
    endpoint_spiffe_id  = local.web_profile ? null : data.zerotrust_spire_server.this.endpoint_spiffe_id
    bundle              = local.web_profile ? null : one(data.zerotrust_trust_bundle.this[*].spiffe_bundle)
  }

  precondition {
    condition     = local.trust_domain != null
    error_message = "This cluster did not answer (see the warning \"Cluster ... Unreachable\"), so its trust domain, endpoint and bundle are unknown: the run fails rather than publish null facts, on which the peers would replace or drop their federations with this cluster. Run again once it answers."
  }

  precondition {
    condition     = local.bundle_endpoint_url != null
    error_message = "This cluster has no federation Route to read its bundle endpoint URL from: set var.bundle_endpoint_url."
  }
}

output "federated_with" {
  description = "The peers (keys of var.peers) this cluster now federates with, sorted."
  value       = sort(keys(zerotrust_federated_trust_domain.peer))
}

output "waiting_for" {
  description = "The https_spiffe peers (keys of var.peers) not federated yet because their bundle is still unknown (their workspace has not applied once): the next run after theirs federates them."
  value       = sort([for name, p in var.peers : name if !contains(keys(local.ready), name)])
}

output "workloads_federate_with" {
  description = "The trust domains this cluster's workloads (the Pods labelled var.workload_label) federate with, sorted; empty without a ClusterSPIFFEID."
  value       = sort(flatten(zerotrust_cluster_spiffe_id.workloads[*].federates_with))
}
