# Terraform >= 1.12: import by resource identity. The SpireServer singleton is
# always named "cluster"; `cluster` is a key of the provider's `clusters` map
# (leave it out for the `kubernetes` connection).
import {
  for_each = toset(["east", "west"])
  to       = zerotrust_spire_federation.this[each.key]
  identity = {
    cluster = each.key
    name    = "cluster"
  }
}
