# `terraform query` lists the ClusterFederatedTrustDomains of every cluster of
# the provider; `-generate-config-out=adopted.tf` also writes a resource block
# and an identity import block for each.
list "zerotrust_federated_trust_domain" "all" {
  provider = zerotrust
}

# Only east's objects of one spire-controller-manager class, federating with
# one peer.
list "zerotrust_federated_trust_domain" "west_on_east" {
  provider = zerotrust

  config {
    cluster      = "east"
    class_name   = "zero-trust-workload-identity-manager-spire"
    trust_domain = "west.example.org"
  }
}
