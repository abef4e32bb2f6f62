# Terraform >= 1.12: import by resource identity instead of an ID string.
import {
  to = zerotrust_cluster_spiffe_id_federation.default
  identity = {
    cluster = "east"
    name    = "spire-spire-default"
  }
}
