# Every federation of every cluster of the provider, asked from the clusters,
# their SPIRE servers and the peers' bundle endpoints. A check block reports
# problems as warnings on every plan and apply, without failing them.
check "federation_healthy" {
  data "zerotrust_federation_status" "all" {}

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
