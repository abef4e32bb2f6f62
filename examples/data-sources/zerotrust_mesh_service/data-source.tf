# What Kuma in cluster "north" knows about the service cart-west: the
# identities its proxies accept, its ports and whether it has healthy endpoints.
data "zerotrust_mesh_service" "cart_west" {
  cluster   = "north"
  namespace = "shop"
  name      = "cart-west"
}

output "cart_west_ports" {
  value = [for p in data.zerotrust_mesh_service.cart_west.ports : "${p.port}/${p.app_protocol}"]
}

# Continuous validation: north's proxies accept west's cart workload, and the
# service has an endpoint.
check "cart_west_trusts_west" {
  assert {
    condition = contains(data.zerotrust_mesh_service.cart_west.spiffe_ids,
    provider::zerotrust::spiffe_id("west.example.org", "ns", "shop", "sa", "cart"))
    error_message = "MeshService shop/cart-west does not accept west's cart identity."
  }

  assert {
    condition     = data.zerotrust_mesh_service.cart_west.state == "Available"
    error_message = "MeshService shop/cart-west has no healthy endpoint."
  }
}
