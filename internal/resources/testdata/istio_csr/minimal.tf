# The smallest IstioCSR: every other attribute is left to the CRD's defaults.
variable "cluster" { type = string }
variable "namespace" { type = string }
variable "issuer" { type = string }

resource "zerotrust_istio_csr" "this" {
  cluster      = var.cluster
  namespace    = var.namespace
  cert_manager = { issuer_ref = { name = var.issuer, kind = "Issuer" } }
  istiod_tls   = { trust_domain = "cluster.local" }
  istio        = { namespace = "istio-system" }
}
