# One workspace of a mesh run as one Terraform workspace per cluster, with
# every workspace's state in one PostgreSQL database (Terraform's pg
# backend) and the peers' facts read from their states. The same shape as
# examples/workspace-per-cluster, whose peers come from variables; here
# nothing is copied between workspaces by hand or by run triggers.
#
# Each workspace has, and holds the credentials of, exactly:
#   - one cluster: a kubeconfig or token bound to the provider's
#     least-privilege role (the guide "Least privilege (RBAC)"), given in the
#     KUBE_* environment variables (KUBE_CONFIG_PATH, or KUBE_HOST,
#     KUBE_CLUSTER_CA_CERT_DATA and KUBE_TOKEN);
#   - one database role, named after the workspace, which state-backend.sql
#     (beside this file) creates: it writes the workspace's own schema and
#     only reads its peers' (PG_CONN_STR, PGUSER and PGPASSWORD).
# The Terraform workspace name (terraform.workspace) is the workspace's name:
# its state is the row of that name in the schema of that name, where the
# peers' terraform_remote_state looks.
#
#   psql "$ADMIN_URL" -v workspace=ws-a -v password="$PW" -f state-backend.sql
#   export PG_CONN_STR=postgres://db.example.com/terraform PGUSER=ws-a PGPASSWORD="$PW"
#   terraform init -backend-config=schema_name=ws-a
#   terraform workspace new ws-a
#   terraform apply -lock-timeout=2m
#
# Create every workspace (`workspace new`) before any of them applies, one
# after another: a peer's terraform_remote_state fails on a workspace that
# does not exist, and reads an empty one as "not published yet"; and the
# backend creates a workspace under a lock of the whole database that it
# does not wait for, so two created at once make one fail. The first apply of each
# workspace federates with the peers that have published their `federation`
# output by then; a second one, once every peer has applied, federates with
# the rest. All workspaces may apply at the same time: each writes its own
# row only, and `-lock-timeout` waits out the backend's brief database-wide
# lock that every run takes when it locks its state.

terraform {
  required_version = ">= 1.8"

  required_providers {
    zerotrust = {
      source = "ztfabric/zerotrust"
    }
  }

  # conn_str from PG_CONN_STR, the role from PGUSER and PGPASSWORD, the
  # schema from `-backend-config=schema_name=<workspace>`. state-backend.sql
  # made the schema, table and index, which the workspace's role may not.
  backend "pg" {
    skip_schema_creation = true
    skip_table_creation  = true
    skip_index_creation  = true
  }
}

variable "peers" {
  description = "Names of the peer workspaces (each one's state is its row in its schema, both of that name); one that has not applied yet is left out until it has."
  type        = set(string)
  default     = []

  validation {
    condition     = !contains(var.peers, terraform.workspace)
    error_message = "peers must not name this workspace itself."
  }
}

variable "bundle_endpoint_url" {
  description = "Where peers reach this cluster's SPIRE bundle endpoint: needed when the cluster states none (no operator federation Route, no chart federation Ingress); when set it wins over the one the cluster states."
  type        = string
  default     = null
}

variable "spire_install" {
  description = "How this cluster's SPIRE was installed: \"operator\" (the OpenShift Zero Trust Workload Identity Manager) or \"helm\" (the SPIFFE Helm chart spiffe/spire); null keeps the provider's default, \"operator\"."
  type        = string
  default     = null

  validation {
    condition     = var.spire_install == null || contains(["operator", "helm"], coalesce(var.spire_install, "operator"))
    error_message = "spire_install is \"operator\" or \"helm\"."
  }
}

# The cluster's credentials come from the KUBE_* environment variables.
provider "zerotrust" {
  field_manager = "zerotrust-${terraform.workspace}"
  spire         = var.spire_install == null ? null : { install = var.spire_install }
}

# Each peer's state, read with this workspace's database role (PG_CONN_STR,
# PGUSER, PGPASSWORD), which may read it and not write it. A peer that has
# not applied yet has an empty state: its `federation` is the default, null.
data "terraform_remote_state" "peer" {
  for_each = var.peers

  backend   = "pg"
  workspace = each.key
  config = {
    schema_name          = each.key
    skip_schema_creation = true
    skip_table_creation  = true
    skip_index_creation  = true
  }
  defaults = {
    federation = null
  }
}

locals {
  published = {
    for name, peer in data.terraform_remote_state.peer : name => peer.outputs.federation
    if peer.outputs.federation != null
  }
}

module "cluster" {
  source = "../modules/cluster-workspace"

  peers               = local.published
  bundle_endpoint_url = var.bundle_endpoint_url
}

output "federation" {
  description = "This cluster's federation facts, which the peers read from this workspace's state."
  value       = module.cluster.federation
}

output "federated_with" {
  description = "The peers this cluster federates with; SPIRE holds each one's bundle."
  value       = module.cluster.federated_with
}

output "waiting_for" {
  description = "Peers not federated yet: their state held no `federation` when this run read it (they have not applied yet), or it held no bundle. Apply again once they have."
  value       = sort(setunion(setsubtract(var.peers, keys(local.published)), module.cluster.waiting_for))
}
