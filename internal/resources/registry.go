package resources

import (
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// All returns every resource constructor of the provider, sorted by name. A
// new resource is added here, so this list is the one place that says what
// the provider serves.
func All() []func() resource.Resource {
	return []func() resource.Resource{
		NewClusterSPIFFEIDResource,
		NewClusterSPIFFEIDFederationResource,
		NewDomainVerificationResource,
		NewFederatedTrustDomainResource,
		NewIstioCSRResource,
		NewMeshServiceIdentitiesResource,
		NewMeshTrustDomainResource,
		NewSpireBundleResource,
		NewSpireFederationResource,
	}
}

// Lists returns the list resource of every resource (Terraform >= 1.14:
// `list` blocks and `terraform query`), sorted by name.
func Lists() []func() list.ListResource {
	return []func() list.ListResource{
		NewClusterSPIFFEIDListResource,
		NewClusterSPIFFEIDFederationListResource,
		NewDomainVerificationListResource,
		NewFederatedTrustDomainListResource,
		NewIstioCSRListResource,
		NewMeshServiceIdentitiesListResource,
		NewMeshTrustDomainListResource,
		NewSpireBundleListResource,
		NewSpireFederationListResource,
	}
}
