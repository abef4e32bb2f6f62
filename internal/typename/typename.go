// Package typename is the one place a Terraform type name of this provider
// is spelled in Go: every resource, list resource, data source and action
// takes its name from here (the resources through their descriptor,
// internal/resources typeInfo), and so do the least-privilege table
// (internal/rbac), the fast-path registration and the conformance mapping.
// internal/conventions fails when a type name is spelled anywhere else in
// production Go.
package typename

// Provider is the provider's type name, the prefix of every type's.
const Provider = "zerotrust"

// Name is a type name after the provider's: "istio_csr" for
// zerotrust_istio_csr.
type Name string

// Resources (and their list resources).
const (
	ClusterSPIFFEID           Name = "cluster_spiffe_id"
	ClusterSPIFFEIDFederation Name = "cluster_spiffe_id_federation"
	DomainVerification        Name = "domain_verification"
	FederatedTrustDomain      Name = "federated_trust_domain"
	IstioCSR                  Name = "istio_csr"
	MeshServiceIdentities     Name = "mesh_service_identities"
	MeshTrustDomain           Name = "mesh_trust_domain"
	SpireBundle               Name = "spire_bundle"
	SpireFederation           Name = "spire_federation"
)

// Data sources that are not also a resource's name.
const (
	FederationStatus Name = "federation_status"
	MeshService      Name = "mesh_service"
	SpireServer      Name = "spire_server"
	TrustBundle      Name = "trust_bundle"
)

// Actions.
const (
	DomainVerificationCheck Name = "domain_verification_check"
	SpireBundleRefresh      Name = "spire_bundle_refresh"
)

// Full is the name configurations use: "zerotrust_istio_csr".
func (n Name) Full() string { return Provider + "_" + string(n) }

// Under is the name under the provider type name the framework passes to
// Metadata.
func (n Name) Under(providerTypeName string) string { return providerTypeName + "_" + string(n) }
