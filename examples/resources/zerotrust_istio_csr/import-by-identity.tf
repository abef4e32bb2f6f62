# Terraform >= 1.12: import by resource identity. The IstioCSR is always named
# "default"; `cluster` is a key of the provider's `clusters` map (leave it out
# for the `kubernetes` connection).
import {
  to = zerotrust_istio_csr.this
  identity = {
    cluster   = "east"
    namespace = "cert-manager"
    name      = "default"
  }
}
