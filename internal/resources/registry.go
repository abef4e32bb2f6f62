package resources

import (
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/fastpath"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
)

// served is one resource type the provider serves: its resource, its list
// resource and, for a type a configuration holds by the hundred, its fast
// path (internal/fastpath).
type served struct {
	resource func() resource.Resource
	list     func() list.ListResource
	fastPath func(data func() *providerdata.Data) fastpath.Resource
}

// registry is the one list of what the provider serves, sorted by type
// name: a new resource is added here, and All, Lists and FastPaths follow.
func registry() []served {
	return []served{
		{resource: NewClusterSPIFFEIDResource, list: NewClusterSPIFFEIDListResource, fastPath: NewClusterSPIFFEIDFastPath},
		{resource: NewClusterSPIFFEIDFederationResource, list: NewClusterSPIFFEIDFederationListResource},
		{resource: NewDomainVerificationResource, list: NewDomainVerificationListResource},
		{resource: NewFederatedTrustDomainResource, list: NewFederatedTrustDomainListResource, fastPath: NewFederatedTrustDomainFastPath},
		{resource: NewIstioCSRResource, list: NewIstioCSRListResource},
		{resource: NewMeshServiceIdentitiesResource, list: NewMeshServiceIdentitiesListResource},
		{resource: NewMeshTrustDomainResource, list: NewMeshTrustDomainListResource},
		{resource: NewSpireBundleResource, list: NewSpireBundleListResource, fastPath: NewSpireBundleFastPath},
		{resource: NewSpireFederationResource, list: NewSpireFederationListResource},
	}
}

// All returns every resource constructor of the provider, sorted by name.
func All() []func() resource.Resource {
	var out []func() resource.Resource
	for _, s := range registry() {
		out = append(out, s.resource)
	}
	return out
}

// Lists returns the list resource of every resource (Terraform >= 1.14:
// `list` blocks and `terraform query`), in All's order.
func Lists() []func() list.ListResource {
	var out []func() list.ListResource
	for _, s := range registry() {
		out = append(out, s.list)
	}
	return out
}

// FastPaths are the fast paths of the resources that have one, by full type
// name (the resource's descriptor), answering from the provider data data
// returns.
func FastPaths(data func() *providerdata.Data) map[string]fastpath.Resource {
	out := map[string]fastpath.Resource{}
	for _, s := range registry() {
		if r, ok := s.resource().(interface{ info() *typeInfo }); ok && s.fastPath != nil {
			out[r.info().name.Full()] = s.fastPath(data)
		}
	}
	return out
}

// servedFast is the fast path (a registration's fastPath) of a type that
// f serves: hooksOf gives the type's resource with the provider data d as
// its Hooks (nil while d is nil, the provider not configured or deferring),
// newResource the resource the framework answers with when the fast path
// leaves a request, configured with the same data.
func servedFast[M any](f *fastpath.For[M], data func() *providerdata.Data,
	hooksOf func(d *providerdata.Data) fastpath.Hooks[M], newResource func() resource.Resource,
) fastpath.Resource {
	return f.Resource(func() fastpath.Hooks[M] {
		return hooksOf(data())
	}, func() (resource.Resource, any) {
		if d := data(); d != nil {
			return newResource(), d
		}
		// An untyped nil: the framework's resource stays unconfigured.
		return newResource(), nil
	})
}
