# The ID is the peer's trust domain.
terraform import zerotrust_spire_bundle.west_in_east west.example.org

# On a cluster of the provider's `clusters` map: <cluster>/<trust_domain>.
terraform import zerotrust_spire_bundle.west_in_east east/west.example.org
