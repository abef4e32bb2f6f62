package resources

import (
	"github.com/ztfabric/terraform-provider-zerotrust/internal/fastpath"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
)

// NewClusterSPIFFEIDFastPath serves zerotrust_cluster_spiffe_id, which a
// configuration holds by the hundred (one per workload class per cluster),
// through internal/fastpath, from the provider data data returns (nil while
// the provider is not configured or defers). Its hooks are the skeleton's
// (kubeResource: Identity, Refresh with the object's refresh and afterRead,
// refreshFederationProblems, and Plan with planClusterSPIFFEID in
// cluster_spiffe_id_plan.go), which its Read, ModifyPlan and ValidateConfig
// run too.
func NewClusterSPIFFEIDFastPath(data func() *providerdata.Data) fastpath.Resource {
	return servedFast(clusterSPIFFEIDType.fast(), data, func(d *providerdata.Data) fastpath.Hooks[clusterSPIFFEIDResourceModel] {
		r := &clusterSPIFFEIDResource{kubeResource[clusterSPIFFEIDResourceModel]{kubeType: clusterSPIFFEIDType}}
		r.Data = d
		return r.hooks()
	}, NewClusterSPIFFEIDResource)
}
