# The DomainVerifications of every cluster (for example those the ingress
# webhook created), and the one for a single domain.
list "zerotrust_domain_verification" "all" {
  provider = zerotrust
}

list "zerotrust_domain_verification" "apps" {
  provider = zerotrust

  config {
    domain = "apps.example.com"
  }
}
