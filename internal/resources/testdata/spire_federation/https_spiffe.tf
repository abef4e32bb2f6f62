# An https_spiffe bundle endpoint and no peers.
variable "cluster" { type = string }

resource "zerotrust_spire_federation" "this" {
  cluster         = var.cluster
  bundle_endpoint = { profile = "https_spiffe" }
}
