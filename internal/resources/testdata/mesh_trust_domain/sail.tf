# A Sail operator Istio on west: its trust domain, an alias, the CA
# certificates of one peer (from its bundle endpoint and as PEM) and istiod's
# CA address.
variable "name" { type = string }
variable "trust_domain" { type = string }
variable "keep_previous_as_alias" { type = bool }
variable "force_conflicts" { type = bool }
variable "peer" { type = string }
variable "peer_pem" { type = string }

resource "zerotrust_mesh_trust_domain" "this" {
  cluster                = "west"
  mesh                   = { kind = "istio_sail", name = var.name }
  trust_domain           = var.trust_domain
  trust_domain_aliases   = ["cluster.local"]
  keep_previous_as_alias = var.keep_previous_as_alias
  force_conflicts        = var.force_conflicts
  ca_certificates = [
    { spiffe_bundle_url = "https://bundle.${var.peer}", trust_domains = [var.peer] },
    { pem = var.peer_pem, trust_domains = [var.peer], cert_signers = ["clusterissuers.cert-manager.io/istio-ca"] },
  ]
  ca_address = "cert-manager-istio-csr.cert-manager.svc:443"
}
