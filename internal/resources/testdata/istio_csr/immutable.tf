# minimal.tf with every attribute the CRD makes immutable changed: another
# issuer (a ClusterIssuer), another private key, another gRPC port.
variable "cluster" { type = string }
variable "namespace" { type = string }
variable "cluster_issuer" { type = string }

resource "zerotrust_istio_csr" "this" {
  cluster      = var.cluster
  namespace    = var.namespace
  cert_manager = { issuer_ref = { name = var.cluster_issuer, kind = "ClusterIssuer" } }
  istiod_tls   = { trust_domain = "cluster.local", private_key_algorithm = "ECDSA", private_key_size = 384 }
  server       = { port = 6443 }
  istio        = { namespace = "istio-system" }
}
