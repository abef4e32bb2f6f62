# Cluster "east" federates with trust domain west.example.org.
resource "zerotrust_federated_trust_domain" "west" {
  cluster             = "east"
  trust_domain        = "west.example.org"
  bundle_endpoint_url = "https://spire-bundle.west.example.org:8443"
  bundle_endpoint_profile = {
    type               = "https_spiffe"
    endpoint_spiffe_id = provider::zerotrust::spiffe_id("west.example.org", "spire", "server")
  }

  # Bootstrap bundle, read from west itself and used once at creation; SPIRE
  # refreshes it from the endpoint afterwards, so a rotation plans nothing.
  trust_domain_bundle = data.zerotrust_trust_bundle.west.spiffe_bundle
}

# West's current bundle, from the ConfigMap its SPIRE server keeps current.
data "zerotrust_trust_bundle" "west" {
  cluster      = "west"
  trust_domain = "west.example.org"
  config_map   = { name = "spire-bundle" }
}

# A Web PKI bundle endpoint needs no endpoint SPIFFE ID and no bootstrap
# bundle. Without `cluster`, on the provider's `kubernetes` connection.
resource "zerotrust_federated_trust_domain" "partner" {
  trust_domain            = "partner.example.com"
  bundle_endpoint_url     = "https://bundle.partner.example.com/spiffe"
  bundle_endpoint_profile = { type = "https_web" }
}
