# Terraform >= 1.12: import by resource identity. `cluster` is a key of the
# provider's `clusters` map (leave it out for the `kubernetes` connection) and
# `name` the object's name: by default the trust domain, dots kept (only `_`
# becomes `-`). `terraform query` writes such blocks for every
# object it lists (see the list resource).
import {
  to = zerotrust_federated_trust_domain.west
  identity = {
    cluster = "east"
    name    = "west.example.org"
  }
}

import {
  to = zerotrust_federated_trust_domain.partner
  identity = {
    name = "partner.example.com"
  }
}
