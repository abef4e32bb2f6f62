# Terraform >= 1.12: import by resource identity: the object's name (by
# default the domain) and, for a cluster of the provider's `clusters` map,
# its key.
import {
  to = zerotrust_domain_verification.apps
  identity = {
    name = "apps.example.com"
  }
}
