# Terraform >= 1.12: import by resource identity instead of an ID string.
import {
  to = zerotrust_cluster_spiffe_id.web
  identity = {
    cluster = "east"
    name    = "web"
  }
}
