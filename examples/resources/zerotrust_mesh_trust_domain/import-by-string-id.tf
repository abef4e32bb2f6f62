# IDs are <kind>:<name> for the cluster-scoped Sail Istio,
# <kind>:<namespace>:<name> otherwise, optionally prefixed with <cluster>/.
import {
  to = zerotrust_mesh_trust_domain.sail
  id = "istio_sail:default"
}

import {
  to = zerotrust_mesh_trust_domain.kyma
  id = "west/istio_kyma:kyma-system:default"
}
