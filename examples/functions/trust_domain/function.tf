output "trust_domain" {
  value = provider::zerotrust::trust_domain("spiffe://west.example.org/spire/server")
  # "west.example.org"
}
