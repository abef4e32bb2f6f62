variable "peers" {
  description = <<-EOT
    The clusters this one federates with, keyed by a name of your choice (the
    peer's workspace name, say), each exactly the peer workspace's output
    `federation`: trust_domain, bundle_endpoint_url, endpoint_spiffe_id (null
    for an https_web endpoint) and bundle (the peer's SPIFFE bundle JSON; null
    until the peer's workspace has applied once). A https_spiffe peer without
    a bundle is not federated yet but listed in the output `waiting_for`.
    Removing a peer revokes it (see delete_bundle_on_destroy).
  EOT
  type = map(object({
    trust_domain        = string
    bundle_endpoint_url = string
    endpoint_spiffe_id  = optional(string)
    bundle              = optional(string)
  }))
  default  = {}
  nullable = false

  validation {
    condition     = length(distinct([for p in values(var.peers) : p.trust_domain])) == length(var.peers)
    error_message = "Two peers have the same trust_domain: SPIRE federates with a trust domain once."
  }
}

variable "bundle_endpoint_url" {
  description = <<-EOT
    Where peers reach this cluster's SPIRE bundle endpoint: needed when the
    cluster states none (no operator federation Route, no chart federation
    Ingress), and when set it wins over the one the cluster states.
  EOT
  type        = string
  default     = null
}

variable "workload_label" {
  description = "Pods with this label (any value) get the SPIFFE ID spiffe://<trust domain>/ns/<namespace>/sa/<service account>, federated with every federated peer; null creates no ClusterSPIFFEID."
  type        = string
  default     = "zerotrust.example/workload"
}

variable "workload_identity_name" {
  description = "Name of the ClusterSPIFFEID (cluster-scoped) that gives the workloads their identity."
  type        = string
  default     = "federated-workloads"
}

variable "class_name" {
  description = "spire-controller-manager class name of the ClusterFederatedTrustDomains and the ClusterSPIFFEID; null uses the provider's spire.class_name."
  type        = string
  default     = null
}

variable "wait_for_bundle" {
  description = "Wait until this cluster's SPIRE server holds each peer's bundle, so an apply means trust, not only objects (needs pods/exec on the SPIRE server)."
  type        = bool
  default     = true
}

variable "delete_bundle_on_destroy" {
  description = "When a peer leaves var.peers (or on destroy), also remove its bundle from this cluster's SPIRE server, so workloads stop trusting it (needs pods/exec on the SPIRE server)."
  type        = bool
  default     = true
}
