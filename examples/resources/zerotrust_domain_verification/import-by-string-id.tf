# The ID is the object name (by default the domain), prefixed with <cluster>/
# for a cluster of the provider's `clusters` map. Adopting an object that the
# ingress webhook (or anyone else) created plans no change and writes nothing;
# the resource then reads the token the controller issued.
import {
  to = zerotrust_domain_verification.apps
  id = "apps.example.com"
}
