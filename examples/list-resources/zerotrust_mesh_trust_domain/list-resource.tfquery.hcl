# Every mesh control-plane object (Kyma Istio, Sail Istio, Kuma MeshTrust) on
# every cluster of the provider.
list "zerotrust_mesh_trust_domain" "all" {
  provider = zerotrust
}

# Only Kuma MeshTrusts for one trust domain, on clusters labelled for the team.
list "zerotrust_mesh_trust_domain" "kuma_west" {
  provider = zerotrust

  config {
    kind           = "kuma"
    trust_domain   = "west.example.org"
    label_selector = "team=platform"
  }
}
