output "parsed" {
  value = provider::zerotrust::parse_spiffe_id("spiffe://west.example.org/ns/payments/sa/api")
  # { trust_domain = "west.example.org", path = "/ns/payments/sa/api", segments = ["ns", "payments", "sa", "api"] }
}
