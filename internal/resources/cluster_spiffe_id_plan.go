package resources

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/clusterspiffeid"
)

// ValidateConfig refuses what spire-controller-manager would refuse without
// asking the cluster (clusterspiffeid.Validate).
func (r *clusterSPIFFEIDResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m clusterSPIFFEIDResourceModel
	if resp.Diagnostics.Append(req.Config.Get(ctx, &m)...); !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(clusterspiffeid.Validate(ctx, m.Spec)...)
	}
}

// ModifyPlan derives the id and class name, plans federation_problems
// empty (the apply waits until it is), and checks against the cluster what
// the configuration alone cannot show.
func (r *clusterSPIFFEIDResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	plan, ok := r.planned(ctx, r.Data, req, resp)
	if !ok {
		return
	}
	// state stays all null on a create.
	var config, state clusterSPIFFEIDResourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if config.ClassName.IsNull() && plan.ClassName.IsUnknown() {
		plan.ClassName = types.StringValue(r.Data.SpireAt(plan.Cluster).ClassName)
	}
	if !req.State.Raw.IsNull() {
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	}
	if found := stringsOf(state.FederationProblems); len(found) > 0 {
		resp.Diagnostics.AddAttributeWarning(path.Root("federation_problems"), "Workloads Do Not Federate",
			fmt.Sprintf("The last refresh found that the workloads of ClusterSPIFFEID %q do not federate as it "+
				"declares: %s. The apply waits until they do; it cannot fix a missing federation or a template that "+
				"fails to render.", plan.Name.ValueString(), strings.Join(found, "; ")))
	}
	plan.FederationProblems = types.ListValueMust(types.StringType, nil)
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	checkWorkloadFederation(ctx, r.Data, plan.Cluster, plan.FederatesWith, plan.SPIFFEIDTemplate, plan.SpireServer, &resp.Diagnostics)
	if !plan.ClassName.Equal(state.ClassName) {
		checkClassServed(ctx, r.Data, "ClusterSPIFFEID", plan.Cluster, plan.ClassName, &resp.Diagnostics)
	}
}
