# An https_web bundle endpoint whose certificate comes from ACME, and https_web
# peers (by default web.test alone).
variable "cluster" { type = string }
variable "peers" {
  type    = list(string)
  default = ["web.test"]
}

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
    for td in var.peers : td => { bundle_endpoint_url = "https://bundles.web.test", bundle_endpoint_profile = "https_web" }
  }
}
