# Adopt the identities a MeshService already has: the import reads them, and
# with the same list in the configuration the plan is empty. The first apply
# that changes them needs force_conflicts = true if another field manager set
# them.
import {
  to = zerotrust_mesh_service_identities.cart_west
  id = "north/shop/cart-west"
}
