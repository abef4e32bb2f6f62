# Adopt existing ClusterFederatedTrustDomains at plan time: the ID is the
# object name on the default connection, <cluster>/<name> on a cluster of the
# provider's `clusters` map. With the configuration that matches the object the
# plan is empty and the import writes nothing: an adopted object keeps the
# className it has (none included) unless class_name is set, and a bundle it
# still carries is kept without trust_domain_bundle in the configuration.
import {
  to = zerotrust_federated_trust_domain.partner
  id = "partner.example.com"
}

import {
  to = zerotrust_federated_trust_domain.west
  id = "east/west.example.org"
}
