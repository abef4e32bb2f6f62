# Adopt existing ClusterFederatedTrustDomains at plan time: the ID is the
# object name on the default connection, <cluster>/<name> on a cluster of the
# provider's `clusters` map.
import {
  to = zerotrust_federated_trust_domain.partner
  id = "partner.example.com"
}

import {
  to = zerotrust_federated_trust_domain.west
  id = "east/west.example.org"
}
