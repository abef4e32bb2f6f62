# Terraform >= 1.12: import by resource identity instead of an ID string.
import {
  to = zerotrust_mesh_service_identities.cart_west
  identity = {
    cluster   = "north"
    namespace = "shop"
    name      = "cart-west"
  }
}
