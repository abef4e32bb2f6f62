# The IstioCSR is always named "default": the ID is its namespace, prefixed
# with <cluster>/ for a cluster of the provider's `clusters` map.
import {
  to = zerotrust_istio_csr.this
  id = "east/cert-manager"
}
