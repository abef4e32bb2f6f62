# Federates one cluster with any number of peer trust domains: one
# ClusterFederatedTrustDomain per peer, on the cluster of the zerotrust
# provider configuration the caller passes in.
#
#   module "east" {
#     source    = "./modules/spire-federation-peer"
#     providers = { zerotrust = zerotrust.east }
#     peers     = { "west.example.org" = { bundle_endpoint_url = "...", ... } }
#   }

terraform {
  required_version = ">= 1.8"

  required_providers {
    zerotrust = {
      source = "ztfabric/zerotrust"
    }
  }
}

resource "zerotrust_federated_trust_domain" "peer" {
  for_each = var.peers

  cluster             = var.cluster
  trust_domain        = each.key
  bundle_endpoint_url = each.value.bundle_endpoint_url
  bundle_endpoint_profile = {
    type = each.value.bundle_endpoint_profile
    # Only https_spiffe authenticates the endpoint by SPIFFE ID; without one
    # given, the SPIRE default spiffe://<peer>/spire/server.
    endpoint_spiffe_id = (each.value.bundle_endpoint_profile == "https_spiffe" ?
    coalesce(each.value.endpoint_spiffe_id, provider::zerotrust::spiffe_id(each.key, "spire", "server")) : null)
  }
  trust_domain_bundle = each.value.trust_domain_bundle
  class_name          = var.class_name
  wait_for_bundle     = var.wait_for_bundle

  delete_bundle_on_destroy = var.delete_bundle_on_destroy
}
