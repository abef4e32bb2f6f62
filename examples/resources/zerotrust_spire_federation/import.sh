# The SpireServer is a singleton named "cluster". On the provider's default connection:
terraform import zerotrust_spire_federation.public cluster

# On a cluster of the provider's `clusters` map: <cluster>/cluster.
terraform import 'zerotrust_spire_federation.this["east"]' east/cluster
