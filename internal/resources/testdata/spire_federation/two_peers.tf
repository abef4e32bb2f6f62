# Federation with west.test (https_spiffe) and north.test (https_web); the
# bundle endpoint and managed_route are left to the CRD's defaults.
variable "cluster" { type = string }

resource "zerotrust_spire_federation" "this" {
  cluster = var.cluster
  federates_with = {
    "west.test" = {
      bundle_endpoint_url     = "https://spire.west.test:8443"
      bundle_endpoint_profile = "https_spiffe"
      endpoint_spiffe_id      = "spiffe://west.test/spire/server"
    }
    "north.test" = {
      bundle_endpoint_url     = "https://bundles.north.test"
      bundle_endpoint_profile = "https_web"
    }
  }
}
