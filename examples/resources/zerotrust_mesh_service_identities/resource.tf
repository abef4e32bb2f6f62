# Cluster "north" runs Kuma; its users call the cart service of the federated
# peer "west" (SPIRE) through the MeshService shop/cart-west, which they
# defined themselves (ports and selector). Kuma's proxies verify the server
# certificate against spec.identities, so the MeshService must name the
# SPIFFE IDs west's workloads carry, in west's trust domain.
data "zerotrust_spire_server" "west" {
  cluster = "west"
}

resource "zerotrust_mesh_service_identities" "cart_west" {
  cluster   = "north"
  namespace = "shop"
  name      = "cart-west" # must exist: this resource writes spec.identities only
  identities = [
    provider::zerotrust::spiffe_id(data.zerotrust_spire_server.west.trust_domain, "ns", "shop", "sa", "cart"),
    provider::zerotrust::spiffe_id(data.zerotrust_spire_server.west.trust_domain, "ns", "shop", "sa", "cart-canary"),
  ]
}
