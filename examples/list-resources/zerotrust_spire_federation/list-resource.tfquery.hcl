# One result per cluster whose SpireServer "cluster" has a federation section.
list "zerotrust_spire_federation" "all" {
  provider = zerotrust
}

# Only the cluster whose own trust domain is east.example.org.
list "zerotrust_spire_federation" "east" {
  provider = zerotrust

  config {
    trust_domain = "east.example.org"
  }
}
