# cert-manager's istio-csr as the CA of a Sail-managed Istio mesh:
# zerotrust_istio_csr runs the agent (through the cert-manager Operator's
# IstioCSR) and waits until the agent serves (operator Ready, Deployment
# available, istiod's Certificate issued); zerotrust_mesh_trust_domain then
# points the mesh at the agent's gRPC endpoint and gives it the trust domain
# istio-csr signs for, keeping the mesh's former trust domain as an alias so
# running workloads keep authenticating while their certificates rotate.
#
# Prerequisites: the cert-manager Operator with istio-csr enabled, the
# cert-manager Issuer var.issuer_name in var.istio_namespace (the Istio
# control plane's namespace: the operator looks an Issuer up there, not in
# the IstioCSR's namespace), and the Sail operator's Istio object
# var.sail_istio_name (with istiod's ENABLE_CA_SERVER=false, so only
# istio-csr signs).
#
# OpenShift only: the IstioCSR object belongs to the cert-manager Operator
# for Red Hat OpenShift (operator.openshift.io/v1alpha1), which a cluster
# whose SPIRE the SPIFFE Helm chart installed (EKS, GKE, AKS) does not run,
# so this example does not apply there.

terraform {
  required_providers {
    zerotrust = {
      source = "ztfabric/zerotrust"
    }
  }
}

variable "kubeconfig" {
  description = "Kubeconfig of the cluster."
  type        = string
  default     = "~/.kube/config"
}

variable "kube_context" {
  description = "Kubeconfig context; null means the current one."
  type        = string
  default     = null
}

variable "trust_domain" {
  description = "Trust domain of the mesh: a DNS-1123 subdomain of at most 63 characters (istio-csr's limit)."
  type        = string
  default     = "apps.east.example.com"
}

variable "istio_csr_namespace" {
  description = "Namespace of the IstioCSR (and of the agent)."
  type        = string
  default     = "cert-manager"
}

variable "istio_namespace" {
  description = "Namespace of the Istio control plane, where the cert-manager Issuer must live."
  type        = string
  default     = "istio-system"
}

variable "issuer_name" {
  description = "cert-manager Issuer in istio_namespace that signs the mesh's certificates."
  type        = string
  default     = "istio-ca"
}

variable "sail_istio_name" {
  description = "Name of the Sail operator's Istio object."
  type        = string
  default     = "default"
}

provider "zerotrust" {
  kubernetes = {
    config_path    = var.kubeconfig
    config_context = var.kube_context
  }
}

resource "zerotrust_istio_csr" "this" {
  namespace    = var.istio_csr_namespace
  cert_manager = { issuer_ref = { name = var.issuer_name, kind = "Issuer" } }
  istiod_tls = {
    trust_domain          = var.trust_domain
    private_key_algorithm = "ECDSA"
    private_key_size      = 256
  }
  istio = { namespace = var.istio_namespace }
}

resource "zerotrust_mesh_trust_domain" "this" {
  mesh = { kind = "istio_sail", name = var.sail_istio_name }

  # The trust domain istio-csr signs SPIFFE IDs for, and its address as the CA.
  trust_domain           = zerotrust_istio_csr.this.istiod_tls.trust_domain
  ca_address             = zerotrust_istio_csr.this.grpc_endpoint
  keep_previous_as_alias = true
}

output "ca_address" {
  description = "Where the mesh's proxies now get their certificates."
  value       = zerotrust_mesh_trust_domain.this.ca_address
}

output "spiffe_id_prefix" {
  description = "Prefix of every workload identity of the mesh."
  value       = zerotrust_mesh_trust_domain.this.spiffe_id_prefix
}

output "previous_trust_domains" {
  description = "Former trust domains still accepted as aliases; set keep_previous_as_alias = false once certificates have rotated."
  value       = zerotrust_mesh_trust_domain.this.previous_trust_domains
}
