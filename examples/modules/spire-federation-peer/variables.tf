variable "peers" {
  description = <<-EOT
    The trust domains this cluster federates with, keyed by trust domain
    (so adding or removing one never touches the others). bundle_endpoint_profile
    is https_spiffe (default) or https_web; endpoint_spiffe_id defaults to
    spiffe://<trust domain>/spire/server for https_spiffe; trust_domain_bundle is
    the peer's SPIFFE bundle JSON, read once at creation (bootstrap only), e.g.
    data.zerotrust_trust_bundle.<peer>.spiffe_bundle.
  EOT
  type = map(object({
    bundle_endpoint_url     = string
    bundle_endpoint_profile = optional(string, "https_spiffe")
    endpoint_spiffe_id      = optional(string)
    trust_domain_bundle     = optional(string)
  }))

  validation {
    condition     = alltrue([for p in values(var.peers) : contains(["https_spiffe", "https_web"], p.bundle_endpoint_profile)])
    error_message = "bundle_endpoint_profile must be https_spiffe or https_web."
  }
}

variable "cluster" {
  description = "Key of the provider's clusters map; null uses the provider's default connection."
  type        = string
  default     = null
}

variable "class_name" {
  description = "spire-controller-manager class name; null uses the provider's spire.class_name."
  type        = string
  default     = null
}

variable "wait_for_bundle" {
  description = "Wait until the cluster's SPIRE server holds each peer's bundle (needs pods/exec on the SPIRE server)."
  type        = bool
  default     = false
}

variable "delete_bundle_on_destroy" {
  description = "On destroy, also remove each peer's bundle from the cluster's SPIRE server, so workloads stop trusting it (needs pods/exec on the SPIRE server; without a SPIRE server pod the destroy warns)."
  type        = bool
  default     = true
}
