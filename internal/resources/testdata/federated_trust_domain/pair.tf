# East and west federated with each other from one provider block: each
# cluster gets a ClusterFederatedTrustDomain for the other's trust domain.
variable "trust_domains" { type = map(string) } # cluster => its trust domain
variable "bundles" { type = map(string) }       # cluster => its SPIFFE bundle
variable "url_suffix" {
  type    = string
  default = ""
}

locals {
  peer = { east = "west", west = "east" }
}

resource "zerotrust_federated_trust_domain" "peer" {
  for_each = local.peer

  cluster             = each.key
  trust_domain        = var.trust_domains[each.value]
  bundle_endpoint_url = "https://spire-${each.value}.example.test:8443${var.url_suffix}"
  bundle_endpoint_profile = {
    type               = "https_spiffe"
    endpoint_spiffe_id = provider::zerotrust::spiffe_id(var.trust_domains[each.value], "spire", "server")
  }
  trust_domain_bundle = var.bundles[each.value]
}
