package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// ModifyPlan derives the id, and asks the cluster when it can: a new
// resource whose MeshService does not exist is flagged now, and an update is
// dry-run applied for conflicts with other field managers and rejections.
func (r *meshServiceIdentitiesResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	plan, _, ok := r.planned(ctx, req, resp)
	if !ok {
		return
	}
	if req.State.Raw.IsNull() {
		r.checkExists(ctx, plan, &resp.Diagnostics)
		return
	}
	checkPlannedApply(ctx, r.Data, req, resp, plannedApply{Kind: kube.KumaMeshService,
		Object: func() (*unstructured.Unstructured, bool) {
			obj, d := meshServiceIdentitiesObjectFromModel(ctx, plan)
			return obj, !d.HasError()
		}})
}

// checkExists warns in the plan of a new resource whose MeshService the
// cluster says does not exist (or whose CRD is not installed). A warning,
// not an error: the same apply may create it (a kubernetes_manifest this
// resource depends on), which a plan cannot see; without it the apply fails
// with the same words. A cluster that cannot be asked quickly says nothing.
func (r *meshServiceIdentitiesResource) checkExists(ctx context.Context, plan meshServiceIdentitiesResourceModel, diags *diag.Diagnostics) {
	if plan.Namespace.IsUnknown() || plan.Name.IsUnknown() {
		return
	}
	ctx, client, cancel := planLookup(ctx, r.Data, plan.Cluster, planApplyTimeout, diags)
	defer cancel()
	if client == nil {
		return
	}
	_, err := client.Get(ctx, kube.KumaMeshService, plan.Namespace.ValueString(), plan.Name.ValueString())
	var d diag.Diagnostic
	switch {
	case kube.IsNotFound(err):
		d = meshServiceNotFound(plan, client.DisplayName(), "The apply will not be able to set the identities of "+
			plan.describe(client.DisplayName())+" unless something in the same apply creates it")
	case kube.IsCRDNotInstalled(err):
		d = kube.Diagnostic(err, "plan the identities of "+plan.describe(client.DisplayName()))
	default:
		return
	}
	diags.AddAttributeWarning(path.Root("name"), d.Summary(), d.Detail())
}
