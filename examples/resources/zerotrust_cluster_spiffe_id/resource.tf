resource "zerotrust_federated_trust_domain" "west_in_east" {
  cluster             = "east"
  trust_domain        = "west.example.org"
  bundle_endpoint_url = "https://spire-bundle.west.example.org"
  bundle_endpoint_profile = {
    type               = "https_spiffe"
    endpoint_spiffe_id = "spiffe://west.example.org/spire/server"
  }
  wait_for_bundle = true
}

# Cluster "east" federates with "west" (see zerotrust_federated_trust_domain
# for the bootstrap bundle and the endpoint profile). Its pods labelled
# app=web in namespaces labelled team=shop get SPIFFE IDs from this
# ClusterSPIFFEID, and their entries federate with west: the workloads get
# west's bundle and accept west's SVIDs. The apply ends when SPIRE's entries
# of those pods carry the federation.
resource "zerotrust_cluster_spiffe_id" "web" {
  cluster            = "east"
  name               = "web"
  spiffe_id_template = "spiffe://{{ .TrustDomain }}/ns/{{ .PodMeta.Namespace }}/sa/{{ .PodSpec.ServiceAccountName }}"

  pod_selector = {
    match_labels = { app = "web" }
  }
  namespace_selector = {
    match_labels = { team = "shop" }
  }
  dns_name_templates = ["{{ .PodMeta.Name }}.{{ .PodMeta.Namespace }}.svc.cluster.local"]
  ttl                = "1h"

  federates_with = [zerotrust_federated_trust_domain.west_in_east.trust_domain]

  # SPIRE refuses entries federating with a trust domain whose bundle it
  # does not hold: the reference above orders this after the federation.
  timeouts = {
    create = "5m"
  }
}
