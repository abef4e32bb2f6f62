# The SpireServer singleton is named "cluster"; prefix <cluster>/ for a
# cluster of the provider's `clusters` map. Import blocks accept for_each too.
import {
  for_each = toset(["east", "west"])
  to       = zerotrust_spire_federation.this[each.key]
  id       = "${each.key}/cluster"
}
