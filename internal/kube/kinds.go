package kube

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Kind describes one API type the provider writes or reads. The REST path is
// known statically so that no request needs discovery: Terraform starts a
// fresh provider process per command, and discovery per process and cluster
// would dominate the cost of small plans.
type Kind struct {
	Group      string
	Version    string
	Kind       string
	Plural     string
	Namespaced bool
	// ProvidedBy names what installs the CRD, for "not installed" errors.
	ProvidedBy string
}

// GVR is the resource the REST calls address.
func (k Kind) GVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: k.Group, Version: k.Version, Resource: k.Plural}
}

// APIVersion is the apiVersion field value of objects of this kind.
func (k Kind) APIVersion() string {
	return schema.GroupVersion{Group: k.Group, Version: k.Version}.String()
}

// CRDName is the name of the CustomResourceDefinition that serves the kind,
// empty for built-in kinds.
func (k Kind) CRDName() string {
	if k.Group == "" {
		return ""
	}
	return k.Plural + "." + k.Group
}

// String reads like "ClusterFederatedTrustDomain (spire.spiffe.io/v1alpha1)".
func (k Kind) String() string {
	return fmt.Sprintf("%s (%s)", k.Kind, k.APIVersion())
}

// The kinds this provider manages or reads.
var (
	ClusterFederatedTrustDomain = Kind{
		Group: "spire.spiffe.io", Version: "v1alpha1", Kind: "ClusterFederatedTrustDomain",
		Plural:     "clusterfederatedtrustdomains",
		ProvidedBy: "spire-controller-manager (the SPIRE Helm chart `spire-crds`, or the OpenShift Zero Trust Workload Identity Manager operator)",
	}
	// ClusterSPIFFEID is spire-controller-manager's template for the
	// registration entries of the pods it selects.
	ClusterSPIFFEID = Kind{
		Group: "spire.spiffe.io", Version: "v1alpha1", Kind: "ClusterSPIFFEID",
		Plural:     "clusterspiffeids",
		ProvidedBy: "spire-controller-manager (the SPIRE Helm chart `spire-crds`, or the OpenShift Zero Trust Workload Identity Manager operator)",
	}
	SpireServer = Kind{
		Group: "operator.openshift.io", Version: "v1alpha1", Kind: "SpireServer", Plural: "spireservers",
		ProvidedBy: "the OpenShift Zero Trust Workload Identity Manager operator",
	}
	ZeroTrustWorkloadIdentityManager = Kind{
		Group: "operator.openshift.io", Version: "v1alpha1", Kind: "ZeroTrustWorkloadIdentityManager",
		Plural:     "zerotrustworkloadidentitymanagers",
		ProvidedBy: "the OpenShift Zero Trust Workload Identity Manager operator",
	}
	IstioCSR = Kind{
		Group: "operator.openshift.io", Version: "v1alpha1", Kind: "IstioCSR", Plural: "istiocsrs", Namespaced: true,
		ProvidedBy: "the cert-manager Operator for Red Hat OpenShift (istio-csr support enabled)",
	}
	// CertManagerIssuer is only read, at plan time: an IstioCSR's issuer_ref
	// of kind Issuer must exist in istio.namespace.
	CertManagerIssuer = Kind{
		Group: "cert-manager.io", Version: "v1", Kind: "Issuer", Plural: "issuers", Namespaced: true,
		ProvidedBy: "cert-manager",
	}
	// CertManagerClusterIssuer is only read, at plan time (an IstioCSR's
	// issuer_ref: ACME issuers and CA secrets).
	CertManagerClusterIssuer = Kind{
		Group: "cert-manager.io", Version: "v1", Kind: "ClusterIssuer", Plural: "clusterissuers",
		ProvidedBy: "cert-manager",
	}
	// CertManagerCertificate is read (an IstioCSR's apply waits for istiod's
	// Certificate) and deleted (an IstioCSR's destroy removes what the
	// operator created for it).
	CertManagerCertificate = Kind{
		Group: "cert-manager.io", Version: "v1", Kind: "Certificate", Plural: "certificates", Namespaced: true,
		ProvidedBy: "cert-manager",
	}
	KymaIstio = Kind{
		Group: "operator.kyma-project.io", Version: "v1alpha2", Kind: "Istio", Plural: "istios", Namespaced: true,
		ProvidedBy: "the Kyma Istio module (istio-manager)",
	}
	SailIstio = Kind{
		Group: "sailoperator.io", Version: "v1", Kind: "Istio", Plural: "istios",
		ProvidedBy: "the Sail operator (OpenShift Service Mesh 3)",
	}
	KumaMeshTrust = Kind{
		Group: "kuma.io", Version: "v1alpha1", Kind: "MeshTrust", Plural: "meshtrusts", Namespaced: true,
		ProvidedBy: "Kuma (kuma-control-plane Helm chart)",
	}
	// KumaMeshService is read, and only its spec.identities written.
	KumaMeshService = Kind{
		Group: "kuma.io", Version: "v1alpha1", Kind: "MeshService", Plural: "meshservices", Namespaced: true,
		ProvidedBy: "Kuma (kuma-control-plane Helm chart)",
	}
	DomainVerificationV1 = Kind{
		Group: "kuadrant.dev", Version: "v1", Kind: "DomainVerification", Plural: "domainverifications",
		ProvidedBy: "the Kuadrant operator",
	}
	DomainVerificationV1Alpha1 = Kind{
		Group: "kuadrant.dev", Version: "v1alpha1", Kind: "DomainVerification", Plural: "domainverifications",
		ProvidedBy: "the Kuadrant operator",
	}
	// Route is read only: the operator publishes the federation bundle endpoint through one.
	Route = Kind{
		Group: "route.openshift.io", Version: "v1", Kind: "Route", Plural: "routes", Namespaced: true,
		ProvidedBy: "OpenShift (the ingress router)",
	}
	// Ingress is read only: the SPIFFE Helm chart publishes the federation
	// bundle endpoint through one.
	Ingress   = Kind{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress", Plural: "ingresses", Namespaced: true}
	ConfigMap = Kind{Version: "v1", Kind: "ConfigMap", Plural: "configmaps", Namespaced: true}
	Pod       = Kind{Version: "v1", Kind: "Pod", Plural: "pods", Namespaced: true}
	// Namespace is read only: a ClusterSPIFFEID's namespaceSelector selects them.
	Namespace = Kind{Version: "v1", Kind: "Namespace", Plural: "namespaces"}
	// The kinds below are the objects the cert-manager Operator creates for
	// an IstioCSR and never removes: an IstioCSR's apply reads the agent's
	// Deployment, its destroy deletes them all (see zerotrust_istio_csr).
	Secret             = Kind{Version: "v1", Kind: "Secret", Plural: "secrets", Namespaced: true}
	Service            = Kind{Version: "v1", Kind: "Service", Plural: "services", Namespaced: true}
	ServiceAccount     = Kind{Version: "v1", Kind: "ServiceAccount", Plural: "serviceaccounts", Namespaced: true}
	Deployment         = Kind{Group: "apps", Version: "v1", Kind: "Deployment", Plural: "deployments", Namespaced: true}
	NetworkPolicy      = Kind{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy", Plural: "networkpolicies", Namespaced: true}
	Role               = Kind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role", Plural: "roles", Namespaced: true}
	RoleBinding        = Kind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding", Plural: "rolebindings", Namespaced: true}
	ClusterRole        = Kind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Plural: "clusterroles"}
	ClusterRoleBinding = Kind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding", Plural: "clusterrolebindings"}
)
