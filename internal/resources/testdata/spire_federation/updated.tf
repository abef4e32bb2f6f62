# two_peers.tf updated: a refresh hint, no operator-managed Route, north.test
# replaced by south.test.
variable "cluster" { type = string }
variable "force_conflicts" {
  type    = bool
  default = false
}

resource "zerotrust_spire_federation" "this" {
  cluster         = var.cluster
  force_conflicts = var.force_conflicts
  bundle_endpoint = {
    refresh_hint = 600
  }
  managed_route = false
  federates_with = {
    "west.test" = {
      bundle_endpoint_url     = "https://spire.west.test:8443"
      bundle_endpoint_profile = "https_spiffe"
      endpoint_spiffe_id      = "spiffe://west.test/spire/server"
    }
    "south.test" = {
      bundle_endpoint_url     = "https://spire.south.test"
      bundle_endpoint_profile = "https_spiffe"
      endpoint_spiffe_id      = "spiffe://south.test/spire/server"
    }
  }
}
