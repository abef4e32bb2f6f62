# Every federation of every cluster of the provider, asked from the clusters,
# their SPIRE servers and the peers' bundle endpoints.
data "zerotrust_federation_status" "all" {}

# A check block reports problems as warnings on every plan and apply, without
# failing them. It asserts on the data source above rather than on one of its
# own: Terraform plans a read of a check block's own data source on every
# run, so `terraform plan -detailed-exitcode` of a converged configuration
# would never exit 0.
check "federation_healthy" {
  assert {
    condition     = data.zerotrust_federation_status.all.ok
    error_message = join("\n", data.zerotrust_federation_status.all.problems)
  }
}

# One cluster, without fetching the peers' endpoints (for example when
# Terraform runs where they are not reachable), and a SPIRE server pod with a
# name of its own.
data "zerotrust_federation_status" "east" {
  cluster         = "east"
  check_endpoints = false
  spire_server = {
    namespace = "spire-server"
    pod       = "spire-server-0"
  }
}

# The trust domains east's SPIRE server holds a bundle of.
output "east_trusts" {
  value = [for f in data.zerotrust_federation_status.east.federations : f.trust_domain if f.bundle_held == true]
}
