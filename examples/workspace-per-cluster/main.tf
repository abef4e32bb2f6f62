# One workspace of a mesh run as one Terraform workspace per cluster: this
# configuration holds the credentials of ONE cluster (least privilege: the
# project's RBAC manifest bound to a ServiceAccount, see the guide "Least
# privilege (RBAC)"), configures that cluster only, and learns about its
# peers only from what their workspaces publish. A compromised workspace
# reaches its own cluster and no other.
#
# Every workspace applies this same configuration with its own variables:
#
#   1. Each workspace applies with its peers' trust domain, bundle endpoint
#      URL and SPIFFE ID (a variable set can hold them in advance) and no
#      bundle, or with no peers: it federates with nobody yet, lists the
#      peers in `waiting_for`, and publishes its own `federation` output.
#      The workspaces may run at the same time.
#   2. Each workspace applies again with its peers' `federation` outputs
#      (tfe_outputs, terraform_remote_state, or run triggers copying them
#      into variables): it federates with every peer and the apply ends when
#      its SPIRE server holds every peer's bundle. At the same time again.
#
# A cluster joins with its own workspace's two applies plus one more peer in
# everyone else's; a cluster leaves when its peers apply without it (which
# deletes its bundle from their SPIRE servers) and its own workspace is
# destroyed.
#
# Each workspace has its own field manager (`zerotrust-<workspace>`), so a
# second workspace that declares a peer this one already federates on the
# same cluster fails at plan instead of silently sharing the object.

terraform {
  required_version = ">= 1.8"

  required_providers {
    zerotrust = {
      source = "ztfabric/zerotrust"
    }
  }
}

variable "workspace_name" {
  description = "Name of this workspace, unique among the workspaces that manage a cluster (for example the HCP Terraform workspace name): the field manager is zerotrust-<workspace_name>."
  type        = string

  validation {
    condition     = can(regex("^[a-z0-9]([-a-z0-9]{0,100}[a-z0-9])?$", var.workspace_name))
    error_message = "workspace_name must be lower-case letters, digits and '-', at most 102 characters."
  }
}

# This cluster's credentials: host, CA and token (remote runs; mark the
# token sensitive in the workspace), or a kubeconfig file and context (local
# runs). All unset: the KUBE_* environment variables of the workspace.
variable "host" {
  description = "API server URL of this cluster, https://..."
  type        = string
  default     = null
}

variable "cluster_ca_certificate" {
  description = "PEM of the CA that signed this cluster's API server certificate."
  type        = string
  default     = null
}

variable "token" {
  description = "Bearer token for this cluster only, for example of a ServiceAccount bound to the provider's least-privilege role."
  type        = string
  default     = null
  sensitive   = true
}

variable "config_path" {
  description = "Kubeconfig file that reaches this cluster (local runs)."
  type        = string
  default     = null
}

variable "config_context" {
  description = "Context of config_path to use; its current context when unset."
  type        = string
  default     = null
}

variable "bundle_endpoint_url" {
  description = "Where peers reach this cluster's SPIRE bundle endpoint: needed when the cluster states none (no operator federation Route, no chart federation Ingress); when set it wins over the one the cluster states."
  type        = string
  default     = null
}

variable "spire_install" {
  description = "How this cluster's SPIRE was installed: \"operator\" (the OpenShift Zero Trust Workload Identity Manager) or \"helm\" (the SPIFFE Helm chart spiffe/spire with its recommended layout: server in spire-server, bundle ConfigMap in spire-system). It becomes the provider's `spire = { install = ... }`, so namespaces, server pod and class follow that install; null keeps the provider's default, \"operator\"."
  type        = string
  default     = null

  validation {
    condition     = var.spire_install == null || contains(["operator", "helm"], coalesce(var.spire_install, "operator"))
    error_message = "spire_install is \"operator\" or \"helm\"."
  }
}

variable "peers" {
  description = "The peers' `federation` outputs, keyed by peer name; a bundle may be null until the peer's workspace has applied (see the module examples/modules/cluster-workspace)."
  type = map(object({
    trust_domain        = string
    bundle_endpoint_url = string
    endpoint_spiffe_id  = optional(string)
    bundle              = optional(string)
  }))
  default = {}
}

provider "zerotrust" {
  kubernetes = {
    host                   = var.host
    cluster_ca_certificate = var.cluster_ca_certificate
    token                  = var.token
    config_path            = var.config_path
    config_context         = var.config_context
  }
  field_manager = "zerotrust-${var.workspace_name}"
  spire         = var.spire_install == null ? null : { install = var.spire_install }
}

# In HCP Terraform the peers come from their workspaces' outputs, for example
# (the tfe provider; `nonsensitive_values`, because the whole of `values` is
# sensitive and a module cannot for_each over sensitive values):
#
#   data "tfe_outputs" "west" {
#     organization = "acme"
#     workspace    = "spire-west"
#   }
#
# or, with any backend, from the peers' state:
#
#   data "terraform_remote_state" "north" {
#     backend = "remote"
#     config = {
#       organization = "acme"
#       workspaces   = { name = "spire-north" }
#     }
#   }
#
# and then:
#
#   peers = {
#     west  = data.tfe_outputs.west.nonsensitive_values.federation
#     north = data.terraform_remote_state.north.outputs.federation
#   }
#
# Reading a peer's outputs needs read access to its state outputs only (in
# HCP Terraform: "Share state" with this workspace), never its credentials.
module "cluster" {
  source = "../modules/cluster-workspace"

  peers               = var.peers
  bundle_endpoint_url = var.bundle_endpoint_url
}

output "federation" {
  description = "This cluster's federation facts for its peers' `peers` (trust domain, bundle endpoint URL and SPIFFE ID, current bundle)."
  value       = module.cluster.federation
}

output "federated_with" {
  description = "The peers this cluster federates with; SPIRE holds each one's bundle."
  value       = module.cluster.federated_with
}

output "waiting_for" {
  description = "Peers not federated yet because their bundle is unknown: run again after their workspace has applied."
  value       = module.cluster.waiting_for
}
