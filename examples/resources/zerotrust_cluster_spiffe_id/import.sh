# The ID is the ClusterSPIFFEID's name.
terraform import zerotrust_cluster_spiffe_id.web web

# On a cluster of the provider's `clusters` map: <cluster>/<name>.
terraform import zerotrust_cluster_spiffe_id.web east/web
