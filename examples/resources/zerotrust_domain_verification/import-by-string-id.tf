# The ID is the object name (by default the domain), prefixed with <cluster>/
# for a cluster of the provider's `clusters` map.
import {
  to = zerotrust_domain_verification.apps
  id = "apps.example.com"
}
