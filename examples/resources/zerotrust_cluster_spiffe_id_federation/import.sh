# The ID is the ClusterSPIFFEID's name.
terraform import zerotrust_cluster_spiffe_id_federation.default spire-spire-default

# On a cluster of the provider's `clusters` map: <cluster>/<name>.
terraform import zerotrust_cluster_spiffe_id_federation.default east/spire-spire-default
