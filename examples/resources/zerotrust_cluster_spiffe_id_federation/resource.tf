# The SPIRE Helm chart installs a default ClusterSPIFFEID on cluster "east"
# (here named "spire-spire-default"); the chart keeps owning its template and
# selectors. This adds federation with west to it, so the workloads it
# registers accept west's SVIDs, and leaves every other field to the chart.
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

resource "zerotrust_cluster_spiffe_id_federation" "default" {
  cluster        = "east"
  name           = "spire-spire-default" # must exist: this resource writes spec.federatesWith only
  federates_with = [zerotrust_federated_trust_domain.west_in_east.trust_domain]
}
