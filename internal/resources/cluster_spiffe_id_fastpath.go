package resources

import (
	"context"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/fastpath"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
)

// clusterSPIFFEIDFast serves zerotrust_cluster_spiffe_id, which a
// configuration holds by the hundred (one per workload class per cluster),
// through internal/fastpath: its Read, ModifyPlan and ValidateConfig, and
// NewClusterSPIFFEIDFastPath. Identity and Refresh are the skeleton's
// (kubeResource: the object's refresh and afterRead,
// refreshFederationProblems); Plan is in cluster_spiffe_id_plan.go.
var clusterSPIFFEIDFast = sync.OnceValue(func() *fastpath.For[clusterSPIFFEIDResourceModel] {
	return fastpath.New[clusterSPIFFEIDResourceModel](context.Background(), clusterSPIFFEIDSchema(context.Background()),
		clusterSPIFFEIDType.shape.schema())
})

// NewClusterSPIFFEIDFastPath answers from the provider data data returns
// (nil while the provider is not configured or defers).
func NewClusterSPIFFEIDFastPath(data func() *providerdata.Data) fastpath.Resource {
	return servedFast(clusterSPIFFEIDFast(), data, func(d *providerdata.Data) fastpath.Hooks[clusterSPIFFEIDResourceModel] {
		r := &clusterSPIFFEIDResource{kubeResource[clusterSPIFFEIDResourceModel]{kubeType: clusterSPIFFEIDType}}
		r.Data = d
		return r.hooks()
	}, NewClusterSPIFFEIDResource)
}

// hooks is r as its fastpath.Hooks, nil until the provider is configured.
func (r *clusterSPIFFEIDResource) hooks() fastpath.Hooks[clusterSPIFFEIDResourceModel] {
	if r.Data == nil {
		return nil
	}
	return r
}

func (r *clusterSPIFFEIDResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	clusterSPIFFEIDFast().Read(ctx, r, req, resp)
}
