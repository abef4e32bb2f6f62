# The MeshServices of every cluster of the provider whose identities name a
# workload of the peer trust domain west.example.org, ready for
# `terraform query -generate-config-out=identities.tf`.
list "zerotrust_mesh_service_identities" "west_peers" {
  provider         = zerotrust
  include_resource = true

  config {
    trust_domain = "west.example.org"
  }
}
