# Every mutable attribute of an IstioCSR set, none at its default. The
# ConfigMap istio-ca-root (key ca.crt) must exist in var.namespace.
variable "cluster" { type = string }
variable "namespace" { type = string }
variable "issuer" { type = string }

resource "zerotrust_istio_csr" "this" {
  cluster                             = var.cluster
  namespace                           = var.namespace
  log_level                           = 3
  log_format                          = "json"
  istio_data_plane_namespace_selector = "maistra.io/member-of=istio-system"
  cert_manager = {
    issuer_ref           = { name = var.issuer, kind = "Issuer" }
    istio_ca_certificate = { name = "istio-ca-root", namespace = var.namespace, key = "ca.crt" }
  }
  istiod_tls = {
    trust_domain             = "cluster.local"
    common_name              = "istiod.istio-system.svc"
    certificate_dns_names    = ["istiod.istio-system.svc", "istiod-basic.istio-system.svc"]
    certificate_duration     = "2h"
    certificate_renew_before = "40m"
    max_certificate_duration = "4h"
  }
  server = { cluster_id = "east" }
  istio  = { namespace = "istio-system", revisions = ["default", "canary"] }
  resources = {
    requests = { cpu = "10m", memory = "32Mi" }
    limits   = { memory = "128Mi" }
  }
  affinity = jsonencode({
    nodeAffinity = {
      requiredDuringSchedulingIgnoredDuringExecution = {
        nodeSelectorTerms = [{ matchExpressions = [{ key = "kubernetes.io/os", operator = "In", values = ["linux"] }] }]
      }
    }
  })
  tolerations = [
    { key = "infra", operator = "Exists", effect = "NoSchedule" },
    { key = "node.kubernetes.io/unreachable", operator = "Exists", effect = "NoExecute", toleration_seconds = 300 },
  ]
  node_selector     = { "kubernetes.io/os" = "linux" }
  controller_config = { labels = { team = "mesh" } }
}
