package resources

import "github.com/hashicorp/terraform-plugin-framework/resource"

// All returns every resource constructor of the provider, sorted by name. A
// new resource is added here, so this list is the one place that says what
// the provider serves.
func All() []func() resource.Resource {
	return []func() resource.Resource{
		NewDomainVerificationResource,
		NewFederatedTrustDomainResource,
		NewIstioCSRResource,
		NewMeshTrustDomainResource,
		NewSpireFederationResource,
	}
}
