# Terraform >= 1.12: import by resource identity. `kind` is the resource's
# mesh.kind; `namespace` is "" for the cluster-scoped Sail Istio.
import {
  to = zerotrust_mesh_trust_domain.sail
  identity = {
    kind      = "istio_sail"
    namespace = ""
    name      = "default"
  }
}

import {
  to = zerotrust_mesh_trust_domain.kyma
  identity = {
    cluster   = "west"
    kind      = "istio_kyma"
    namespace = "kyma-system"
    name      = "default"
  }
}
