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

# Adopting a mesh someone else set up: configure only what this resource
# should manage. Attributes left out are not written (trust_domain then shows
# the object's value, null while Istio runs on cluster.local), so the plan
# after the import is empty and the object is not touched.
import {
  to = zerotrust_mesh_trust_domain.adopted
  id = "north/istio_sail:mesh-b"
}

resource "zerotrust_mesh_trust_domain" "adopted" {
  cluster = "north"
  mesh    = { kind = "istio_sail", name = "mesh-b" }
}
