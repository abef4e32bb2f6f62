package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// ModifyPlan derives the id; a new resource whose ClusterSPIFFEID does not
// exist is flagged (a warning: the same apply may create it); an update is
// dry-run applied for conflicts with other managers; and the trust domains
// are checked against the cluster as zerotrust_cluster_spiffe_id's are.
func (r *clusterSPIFFEIDFederationResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.Data == nil {
		return
	}
	var plan clusterSPIFFEIDFederationResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() || !r.Data.CheckCluster(plan.Cluster, path.Root("cluster"), &resp.Diagnostics) {
		return
	}
	if plan.Cluster.IsUnknown() || plan.Name.IsUnknown() {
		plan.ID = types.StringUnknown()
	} else {
		plan.ID = types.StringValue(resourceID(plan.Cluster, plan.Name.ValueString()))
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	if req.State.Raw.IsNull() && !plan.Name.IsUnknown() {
		if client := planClient(ctx, r.Data, plan.Cluster, &resp.Diagnostics); client != nil {
			ctx, cancel := context.WithTimeout(ctx, planApplyTimeout)
			_, err := client.Get(ctx, kube.ClusterSPIFFEID, "", plan.Name.ValueString())
			cancel()
			if kube.IsNotFound(err) {
				d := clusterSPIFFEIDNotFound(plan, client.DisplayName(), "The apply will not be able to set the federation "+
					"of the "+plan.describe(client.DisplayName())+" unless something in the same apply creates it")
				resp.Diagnostics.AddAttributeWarning(path.Root("name"), d.Summary(), d.Detail())
			}
		}
	}
	checkWorkloadFederation(ctx, r.Data, plan.Cluster, plan.FederatesWith, types.StringNull(), &resp.Diagnostics)
	checkPlannedApply(ctx, r.Data, req, resp, plannedApply{Kind: kube.ClusterSPIFFEID,
		Object: func() (*unstructured.Unstructured, bool) {
			return clusterSPIFFEIDFederationObjectFromModel(ctx, plan), true
		}})
}
