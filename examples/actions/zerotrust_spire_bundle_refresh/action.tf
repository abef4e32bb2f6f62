# Fetch west's bundle into east's SPIRE server now, instead of at its next
# scheduled refresh. Run it on demand:
#   terraform apply -invoke=action.zerotrust_spire_bundle_refresh.west
action "zerotrust_spire_bundle_refresh" "west" {
  config {
    cluster      = "east"
    trust_domain = "west.example.org"

    # Only where the SPIRE server is not the operator's default pod.
    spire_server = {
      namespace = "spire-server"
      pod       = "spire-server-0"
    }
    timeout = "5m"
  }
}

# Or after federating, from the resource's lifecycle: the apply returns once
# east's SPIRE server holds west's bundle, fetched from west's endpoint.
resource "zerotrust_federated_trust_domain" "west" {
  cluster             = "east"
  trust_domain        = "west.example.org"
  bundle_endpoint_url = "https://spire-bundle.west.example.org:8443"
  bundle_endpoint_profile = {
    type               = "https_spiffe"
    endpoint_spiffe_id = "spiffe://west.example.org/spire/server"
  }
  trust_domain_bundle = data.zerotrust_trust_bundle.west.spiffe_bundle

  lifecycle {
    action_trigger {
      events  = [after_create]
      actions = [action.zerotrust_spire_bundle_refresh.west]
    }
  }
}

data "zerotrust_trust_bundle" "west" {
  cluster      = "west"
  trust_domain = "west.example.org"
  config_map   = { name = "spire-bundle" }
}
