# Cluster "north" runs the SPIFFE Helm chart's SPIRE with a BundlePublisher
# writing its bundle to object storage (aws_s3, gcp_cloudstorage or
# azure_blob, format "spiffe"); cluster "east" (chart or operator) federates
# from that object with https_web. No path between the SPIRE servers is
# needed, and no apply per rotation: north's SPIRE publishes, east's fetches.
data "zerotrust_spire_server" "north" {
  cluster = "north"
}

locals {
  # The publisher peers read: the one writing SPIFFE bundles.
  north_published = one([for p in data.zerotrust_spire_server.north.bundle_publishers : p if p.format == "spiffe"])
}

# Read as east's SPIRE will read it: over HTTPS, without credentials.
data "zerotrust_trust_bundle" "north" {
  trust_domain = data.zerotrust_spire_server.north.trust_domain
  published    = { url = local.north_published.url }
}

resource "zerotrust_federated_trust_domain" "north" {
  cluster                 = "east"
  trust_domain            = data.zerotrust_spire_server.north.trust_domain
  bundle_endpoint_url     = local.north_published.url
  bundle_endpoint_profile = { type = "https_web" } # never https_spiffe: a store cannot present north's SPIFFE ID
  trust_domain_bundle     = data.zerotrust_trust_bundle.north.spiffe_bundle
  wait_for_bundle         = true
}
