# One provider block can reach many clusters: the default connection, and
# named ones that resources select with `cluster`.
provider "zerotrust" {
  kubernetes = {
    config_path    = "~/.kube/config"
    config_context = "east"
  }

  clusters = {
    east = { config_path = "~/.kube/config", config_context = "east" }
    # A cluster whose SPIRE the SPIFFE Helm chart installed (EKS, GKE, AKS).
    west = { config_path = "~/.kube/config", config_context = "west", spire = { install = "helm" } }
  }

  # The defaults, written out.
  field_manager  = "zerotrust"
  qps            = 1000
  burst          = 2000
  on_unreachable = "warn"

  spire = {
    install    = "operator"
    namespace  = "zero-trust-workload-identity-manager"
    class_name = "zero-trust-workload-identity-manager-spire"
  }
}
