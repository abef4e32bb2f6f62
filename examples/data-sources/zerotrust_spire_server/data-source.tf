# What a peer needs to federate with cluster "west". bundle_endpoint_url is
# the host of the operator's Route spire-server-federation (OpenShift), read in
# the namespace zero-trust-workload-identity-manager where the operator always
# puts it (not `namespace`); null where no such Route is served, before the
# operator has created it, or with managedRoute "false". A SPIRE installed by
# the SPIFFE Helm chart is read as well (install = "auto" when unset, or
# "helm"): its bundle_endpoint_url is the host of the chart's federation
# Ingress.
data "zerotrust_spire_server" "west" {
  cluster = "west"
}

# Cluster "east" federates with "west", wired from west's facts.
resource "zerotrust_federated_trust_domain" "west" {
  cluster             = "east"
  trust_domain        = data.zerotrust_spire_server.west.trust_domain
  bundle_endpoint_url = data.zerotrust_spire_server.west.bundle_endpoint_url
  bundle_endpoint_profile = {
    type = data.zerotrust_spire_server.west.federation_profile
    # Only the https_spiffe profile authenticates the endpoint by its SPIFFE ID.
    endpoint_spiffe_id = (data.zerotrust_spire_server.west.federation_profile == "https_spiffe" ?
    data.zerotrust_spire_server.west.endpoint_spiffe_id : null)
  }
}

output "west_bundle_config_map" {
  value = "${data.zerotrust_spire_server.west.bundle_namespace}/${data.zerotrust_spire_server.west.bundle_config_map}"
}
