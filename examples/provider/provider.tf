# One provider block can reach many clusters: the default connection, and
# named ones that resources select with `cluster`.
provider "zerotrust" {
  kubernetes = {
    config_path    = "~/.kube/config"
    config_context = "east"
  }

  clusters = {
    east = { config_path = "~/.kube/config", config_context = "east" }
    west = { config_path = "~/.kube/config", config_context = "west" }
    # A cluster created in the same configuration: values may be unknown at plan time.
    # north = {
    #   host                   = module.eks.cluster_endpoint
    #   cluster_ca_certificate = base64decode(module.eks.cluster_certificate_authority_data)
    #   exec = {
    #     api_version = "client.authentication.k8s.io/v1beta1"
    #     command     = "aws"
    #     args        = ["eks", "get-token", "--cluster-name", module.eks.cluster_name]
    #   }
    # }
  }

  field_manager = "zerotrust"
  qps           = 50
  burst         = 100

  spire = {
    namespace  = "zero-trust-workload-identity-manager"
    class_name = "zero-trust-workload-identity-manager-spire"
  }
}
