# Every cluster serves its bundle endpoint and federates statically with the
# others. The peers' facts come from the zerotrust_spire_server data source,
# never from copied strings. A peer listed here gets no
# zerotrust_federated_trust_domain on the same cluster: SPIRE would let this
# entry override it, and a plan that declares both is refused.
locals {
  clusters = toset(["east", "west", "north"])
}

data "zerotrust_spire_server" "this" {
  for_each = local.clusters
  cluster  = each.key
}

resource "zerotrust_spire_federation" "this" {
  for_each = local.clusters
  cluster  = each.key

  # Unset fields keep the CRD's defaults (refresh_hint 300, managed_route true)
  # and are not written: the operator publishes the endpoint through its Route
  # spire-server-federation, host federation.<trust domain>, in the namespace
  # zero-trust-workload-identity-manager. Create and update wait for the
  # operator's verdict and for that Route, so bundle_endpoint_url is known
  # when they return. managed_route = false leaves the SpireServer Ready=False
  # for good (the plan warns).
  bundle_endpoint = {
    profile = "https_spiffe" # cannot change once set
  }

  # Keyed by trust domain, so adding or reordering peers never reshuffles entries.
  # A cluster never lists its own trust domain.
  federates_with = {
    for peer in setsubtract(local.clusters, [each.key]) :
    data.zerotrust_spire_server.this[peer].trust_domain => {
      # https://<host> of the peer's federation Route: null until the peer's
      # federation has been applied once (the operator creates the Route then).
      bundle_endpoint_url     = data.zerotrust_spire_server.this[peer].bundle_endpoint_url
      bundle_endpoint_profile = "https_spiffe"
      endpoint_spiffe_id      = data.zerotrust_spire_server.this[peer].endpoint_spiffe_id
    }
  }
}

# A bundle endpoint with a Web PKI certificate from an ACME CA, on the
# provider's default connection. The operator refuses ACME without
# tos_accepted = true (so does the plan), and domain_name should be the
# Route's host, federation.<trust domain>: the Route passes TLS through by
# that name.
resource "zerotrust_spire_federation" "public" {
  bundle_endpoint = {
    profile = "https_web"
    https_web = {
      acme = {
        directory_url = "https://acme-v02.api.letsencrypt.org/directory"
        domain_name   = "federation.apps.example.com"
        email         = "platform@example.com"
        tos_accepted  = true
      }
    }
  }
}
