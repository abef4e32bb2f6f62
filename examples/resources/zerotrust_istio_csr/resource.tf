# istio-csr signs istiod's and the workloads' certificates with a cert-manager issuer.
# The cert-manager Operator deploys the agent; the apply waits until the operator reports
# Ready, the agent's Deployment is available and istiod's Certificate is issued. Only one
# IstioCSR per cluster is served. Destroy also removes the agent the operator leaves behind.
# Only the attributes written here are sent: unset ones take the CRD defaults on a new
# object and keep an existing object's values, so an imported IstioCSR plans no change.
resource "zerotrust_istio_csr" "this" {
  namespace = "cert-manager" # where the singleton IstioCSR "default" lives

  cert_manager = {
    # An Issuer must live in istio.namespace (istio-system), not in the IstioCSR's
    # namespace; a ClusterIssuer is cluster-wide. Kind and group exactly as written here:
    # cert-manager refuses other letter cases.
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
