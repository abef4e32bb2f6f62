# The ClusterSPIFFEIDs of every cluster of the provider whose entries
# federate with west.example.org, ready for
# `terraform query -generate-config-out=cluster_spiffe_ids.tf`.
list "zerotrust_cluster_spiffe_id" "west_federated" {
  provider         = zerotrust
  include_resource = true

  config {
    federates_with = "west.example.org"
  }
}
