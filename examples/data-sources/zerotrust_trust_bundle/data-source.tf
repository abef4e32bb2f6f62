# West's bundle, asked from west's SPIRE server through pod exec
# (`spire-server bundle show -format spiffe`).
data "zerotrust_trust_bundle" "west" {
  cluster      = "west"
  trust_domain = "west.example.org"
  spire_server = {} # namespace from the provider's spire.namespace, pod spire-server-0
}

# The same bundle from the ConfigMap SPIRE keeps current: bundle.spiffe from its
# BundlePublisher "k8s_configmap" (the Helm chart's default) or bundle.crt from its
# Notifier "k8sbundle" (the operator's), whichever the ConfigMap has.
data "zerotrust_trust_bundle" "west_configmap" {
  cluster      = "west"
  trust_domain = "west.example.org"
  config_map   = { name = "spire-bundle" }
  timeout      = "5m"
}

# From west's federation bundle endpoint, authenticated with a bundle read before.
data "zerotrust_trust_bundle" "west_endpoint" {
  trust_domain = "west.example.org"
  endpoint = {
    url                = "https://spire-bundle.west.example.org:8443"
    profile            = "https_spiffe"
    endpoint_spiffe_id = provider::zerotrust::spiffe_id("west.example.org", "spire", "server")
    bootstrap_bundle   = data.zerotrust_trust_bundle.west.spiffe_bundle
  }
}

# A Web PKI endpoint, verified with the system roots (or ca_certificates).
data "zerotrust_trust_bundle" "partner" {
  trust_domain = "partner.example.com"
  endpoint = {
    url     = "https://bundle.partner.example.com/spiffe"
    profile = "https_web"
  }
}

# The object a SPIRE BundlePublisher (aws_s3, gcp_cloudstorage, azure_blob)
# writes, read over HTTPS as a peer's SPIRE reads it with https_web. The URL is
# what zerotrust_spire_server reports in bundle_publishers.
data "zerotrust_trust_bundle" "north_published" {
  trust_domain = "north.example.org"
  published = {
    url = "https://example-spiffe-bundles.s3.eu-west-1.amazonaws.com/north.example.org/bundle.json"
  }
}

# East trusts west: the bundle goes from one cluster to the other, never copied by hand.
resource "zerotrust_federated_trust_domain" "west" {
  cluster             = "east"
  trust_domain        = data.zerotrust_trust_bundle.west.trust_domain
  bundle_endpoint_url = "https://spire-bundle.west.example.org:8443"
  bundle_endpoint_profile = {
    type               = "https_spiffe"
    endpoint_spiffe_id = provider::zerotrust::spiffe_id("west.example.org", "spire", "server")
  }
  trust_domain_bundle = data.zerotrust_trust_bundle.west.spiffe_bundle
}

output "west_ca_expires_at" {
  value = data.zerotrust_trust_bundle.west.expires_at
}
