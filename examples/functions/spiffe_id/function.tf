output "spire_server_id" {
  value = provider::zerotrust::spiffe_id("west.example.org", "spire", "server")
  # "spiffe://west.example.org/spire/server"
}
