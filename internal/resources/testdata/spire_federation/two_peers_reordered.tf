# two_peers.tf with the map and each entry written in another order.
variable "cluster" { type = string }

resource "zerotrust_spire_federation" "this" {
  cluster = var.cluster
  federates_with = {
    "north.test" = {
      bundle_endpoint_profile = "https_web"
      bundle_endpoint_url     = "https://bundles.north.test"
    }
    "west.test" = {
      endpoint_spiffe_id      = "spiffe://west.test/spire/server"
      bundle_endpoint_profile = "https_spiffe"
      bundle_endpoint_url     = "https://spire.west.test:8443"
    }
  }
}
