# The ID is <namespace>/<name> of the MeshService.
terraform import zerotrust_mesh_service_identities.cart_west shop/cart-west

# On a cluster of the provider's `clusters` map: <cluster>/<namespace>/<name>.
terraform import zerotrust_mesh_service_identities.cart_west north/shop/cart-west
