# An https_web bundle endpoint whose certificate comes from ACME, and one
# https_web peer.
variable "cluster" { type = string }

resource "zerotrust_spire_federation" "this" {
  cluster = var.cluster
  bundle_endpoint = {
    profile = "https_web"
    https_web = {
      acme = {
        directory_url = "https://acme.example.test/directory"
        domain_name   = "federation.solo.test"
        email         = "admin@example.test"
        tos_accepted  = true
      }
    }
  }
  federates_with = {
    "web.test" = { bundle_endpoint_url = "https://bundles.web.test", bundle_endpoint_profile = "https_web" }
  }
}
