# A Sail-managed Istio mesh moves from cluster.local to its own trust domain
# without breaking identities: the old trust domain stays an alias until every
# workload certificate has rotated. It also trusts a federated peer's CAs.
# Destroying the resource leaves the trust domain in place (keep_on_destroy):
# without it the mesh would fall back to cluster.local, changing every
# workload identity (the destroy plan warns).
resource "zerotrust_mesh_trust_domain" "sail" {
  mesh                   = { kind = "istio_sail" } # the Istio object "default"
  trust_domain           = "apps.east.example.com"
  keep_previous_as_alias = true
  keep_on_destroy        = true

  ca_certificates = [
    {
      pem           = data.zerotrust_trust_bundle.west.x509_authorities_pem
      trust_domains = [data.zerotrust_trust_bundle.west.trust_domain]
    },
  ]
}

# Kyma's Istio module: only the trust domain (no aliases).
resource "zerotrust_mesh_trust_domain" "kyma" {
  cluster      = "west"
  mesh         = { kind = "istio_kyma" } # kyma-system/default
  trust_domain = "apps.west.example.com"
}

# Kuma: a MeshTrust (created by this resource) accepting the peer's CA bundles.
resource "zerotrust_mesh_trust_domain" "kuma_peer" {
  cluster      = "north"
  mesh         = { kind = "kuma", namespace = "kuma-system" } # name derived: west-example-org
  trust_domain = data.zerotrust_trust_bundle.west.trust_domain
  ca_bundles   = [data.zerotrust_trust_bundle.west.x509_authorities_pem]
}

# The federated peer's CAs, read from the peer cluster.
data "zerotrust_trust_bundle" "west" {
  cluster      = "west"
  trust_domain = "west.example.org"
  config_map   = { name = "spire-bundle" }
}
