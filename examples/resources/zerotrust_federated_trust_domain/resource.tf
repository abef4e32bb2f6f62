# Cluster "east" federates with trust domain west.example.org.
resource "zerotrust_federated_trust_domain" "west" {
  cluster             = "east"
  trust_domain        = "west.example.org"
  bundle_endpoint_url = "https://spire-bundle.west.example.org:8443"
  bundle_endpoint_profile = {
    type               = "https_spiffe"
    endpoint_spiffe_id = provider::zerotrust::spiffe_id("west.example.org", "spire", "server")
  }

  # Bootstrap bundle, read once at creation; SPIRE refreshes it from the endpoint afterwards.
  trust_domain_bundle = file("${path.module}/west-bundle.json")
}

# A Web PKI bundle endpoint needs no endpoint SPIFFE ID and no bootstrap bundle.
resource "zerotrust_federated_trust_domain" "partner" {
  cluster                 = "east"
  trust_domain            = "partner.example.com"
  bundle_endpoint_url     = "https://bundle.partner.example.com/spiffe"
  bundle_endpoint_profile = { type = "https_web" }
}
