package resources

import (
	"context"
	"fmt"
	"slices"

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
	plan, _, ok := r.planned(ctx, req, resp)
	if !ok {
		return
	}
	if req.State.Raw.IsNull() && !plan.Name.IsUnknown() {
		lookupCtx, client, cancel := planLookup(ctx, r.Data, plan.Cluster, planApplyTimeout, &resp.Diagnostics)
		defer cancel()
		if client != nil {
			obj, err := client.Get(lookupCtx, kube.ClusterSPIFFEID, "", plan.Name.ValueString())
			if err == nil && applier(client.FieldManager).holds(obj, clusterSPIFFEIDSpecFieldsBut("federatesWith")...) {
				// Our apply holds the object's other fields (a
				// zerotrust_cluster_spiffe_id with this field manager):
				// an apply of federatesWith alone, by the same manager,
				// would remove them.
				resp.Diagnostics.AddAttributeError(path.Root("name"), "ClusterSPIFFEID Managed in Full by This Provider",
					fmt.Sprintf("The %s is managed in full by field manager %q, this provider's: a zerotrust_cluster_spiffe_id "+
						"(in this configuration or another one with the same field_manager) wrote it. Server-side apply of "+
						"spec.federatesWith alone by the same manager would remove the other fields it wrote, such as the "+
						"SPIFFE ID template. Set federates_with on that zerotrust_cluster_spiffe_id instead, or give this "+
						"configuration its own provider field_manager.", clusterSPIFFEIDOn(plan.Name, client.DisplayName()), client.FieldManager))
				return
			}
			if kube.IsNotFound(err) {
				d := clusterSPIFFEIDNotFound(plan, client.DisplayName(), "The apply will not be able to set the federation "+
					"of the "+clusterSPIFFEIDOn(plan.Name, client.DisplayName())+" unless something in the same apply creates it")
				resp.Diagnostics.AddAttributeWarning(path.Root("name"), d.Summary(), d.Detail())
			}
		}
	}
	checkWorkloadFederation(ctx, r.Data, plan.Cluster, plan.FederatesWith, types.StringNull(), plan.SpireServer, &resp.Diagnostics)
	checkPlannedApply(ctx, r.Data, req, resp, plannedApply{Kind: kube.ClusterSPIFFEID,
		Object: func() (*unstructured.Unstructured, bool) {
			return clusterSPIFFEIDFederationObjectFromModel(plan), true
		}})
}

// clusterSPIFFEIDSpecFieldsBut is the path of every spec field of a
// ClusterSPIFFEID that zerotrust_cluster_spiffe_id writes, except the named
// ones.
func clusterSPIFFEIDSpecFieldsBut(except ...string) [][]string {
	var paths [][]string
	for _, f := range []string{"spiffeIDTemplate", "podSelector", "namespaceSelector", "federatesWith", "dnsNameTemplates",
		"workloadSelectorTemplates", "ttl", "jwtTtl", "hint", "className", "fallback", "admin", "downstream", "autoPopulateDNSNames"} {
		if !slices.Contains(except, f) {
			paths = append(paths, []string{"spec", f})
		}
	}
	return paths
}
