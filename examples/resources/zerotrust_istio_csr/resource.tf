# istio-csr signs istiod's and the workloads' certificates with a cert-manager issuer.
# The cert-manager Operator deploys the agent; the apply waits until it reports Ready.
# Only the attributes written here are sent: unset ones take the CRD defaults on a new
# object and keep an existing object's values, so an imported IstioCSR plans no change.
resource "zerotrust_istio_csr" "this" {
  namespace = "cert-manager" # where the singleton IstioCSR "default" lives

  cert_manager = {
    # An Issuer must live in istio.namespace (istio-system), not in the IstioCSR's
    # namespace; a ClusterIssuer is cluster-wide.
    issuer_ref = { name = "istio-ca", kind = "Issuer", group = "cert-manager.io" }
  }
  istiod_tls = {
    trust_domain          = "apps.east.example.com"
    private_key_algorithm = "ECDSA"
    private_key_size      = 256
  }
  istio  = { namespace = "istio-system", revisions = ["default"] }
  server = { cluster_id = "east", port = 443 }

  log_level  = 2
  log_format = "json"

  resources   = { requests = { cpu = "10m", memory = "32Mi" }, limits = { memory = "128Mi" } }
  tolerations = [{ key = "node-role.kubernetes.io/infra", operator = "Exists", effect = "NoSchedule" }]
  affinity = jsonencode({
    nodeAffinity = {
      requiredDuringSchedulingIgnoredDuringExecution = {
        nodeSelectorTerms = [{ matchExpressions = [{ key = "kubernetes.io/os", operator = "In", values = ["linux"] }] }]
      }
    }
  })

  timeouts {
    create = "15m"
  }
}

# The CA address for the mesh (see zerotrust_mesh_trust_domain.ca_address).
output "istio_csr_endpoint" {
  value = zerotrust_istio_csr.this.grpc_endpoint
}
