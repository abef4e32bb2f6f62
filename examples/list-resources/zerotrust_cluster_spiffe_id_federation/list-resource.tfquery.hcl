# The ClusterSPIFFEIDs of every cluster of the provider that federate, ready
# for `terraform query -generate-config-out=federations.tf` to adopt their
# federation without taking the rest of each object over.
list "zerotrust_cluster_spiffe_id_federation" "all" {
  provider         = zerotrust
  include_resource = true
}
