# On the provider's default connection: the object name.
terraform import zerotrust_federated_trust_domain.partner partner.example.com

# On a cluster of the provider's `clusters` map: <cluster>/<name>.
terraform import zerotrust_federated_trust_domain.west east/west.example.org
