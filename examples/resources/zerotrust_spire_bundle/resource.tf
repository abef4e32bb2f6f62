# East's and west's SPIRE servers cannot reach each other, but Terraform
# reaches both API servers. West's bundle is read from west's own SPIRE
# server (pod exec), never from a bundle endpoint, and set in east's.
data "zerotrust_trust_bundle" "west" {
  cluster      = "west"
  trust_domain = "west.example.org"
  spire_server = {}
}

resource "zerotrust_spire_bundle" "west_in_east" {
  cluster      = "east"
  trust_domain = data.zerotrust_trust_bundle.west.trust_domain
  bundle       = data.zerotrust_trust_bundle.west.spiffe_bundle
  on_destroy   = "dissociate" # the default: entries that federate with west lose it, and stay
}

# East's workloads federate with west as with any other trust domain.
resource "zerotrust_cluster_spiffe_id" "api" {
  cluster            = "east"
  name               = "api"
  spiffe_id_template = "spiffe://{{ .TrustDomain }}/ns/{{ .PodMeta.Namespace }}/sa/{{ .PodSpec.ServiceAccountName }}"
  pod_selector = {
    match_labels = { app = "api" }
  }
  federates_with = [zerotrust_spire_bundle.west_in_east.trust_domain]
}
