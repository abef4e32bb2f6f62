# An https_web bundle endpoint serving a certificate from a Secret, without
# the operator's Route, and no peers.
variable "cluster" { type = string }

resource "zerotrust_spire_federation" "this" {
  cluster = var.cluster
  bundle_endpoint = {
    profile   = "https_web"
    https_web = { serving_cert = { external_secret_ref = "federation-tls" } }
  }
  managed_route = false
}
