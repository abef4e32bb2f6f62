package resources

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/clusterspiffeid"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/fastpath"
)

// ValidateConfig refuses what spire-controller-manager would refuse without
// asking the cluster (clusterspiffeid.Validate).
func (r *clusterSPIFFEIDResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	r.validated(ctx, req, resp, func(ctx context.Context, config clusterSPIFFEIDResourceModel, diags *diag.Diagnostics) {
		diags.Append(clusterspiffeid.Validate(ctx, config.Spec)...)
	})
}

// ModifyPlan derives the id and class name, plans federation_problems
// empty (the apply waits until it is), and checks against the cluster what
// the configuration alone cannot show: all of it is the skeleton's Plan
// with planClusterSPIFFEID, which the fast path runs too.
func (r *clusterSPIFFEIDResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	r.planned(ctx, req, resp)
}

// planClusterSPIFFEID is the descriptor's plan, ModifyPlan's work after the
// prologue: it completes plan (the framework's plan after defaults and
// attribute plan modifiers) from config and the prior state (nil when
// creating).
func planClusterSPIFFEID(ctx context.Context, r *kubeResource[clusterSPIFFEIDResourceModel], plan *clusterSPIFFEIDResourceModel,
	config clusterSPIFFEIDResourceModel, state *clusterSPIFFEIDResourceModel, _ fastpath.PrivateGetter) diag.Diagnostics {
	var diags diag.Diagnostics
	if config.ClassName.IsNull() && plan.ClassName.IsUnknown() {
		plan.ClassName = types.StringValue(r.Data.SpireAt(plan.Cluster).ClassName)
	}
	// prior stays all null on a create.
	var prior clusterSPIFFEIDResourceModel
	if state != nil {
		prior = *state
	}
	if found := stringsOf(prior.FederationProblems); len(found) > 0 {
		diags.AddAttributeWarning(path.Root("federation_problems"), "Workloads Do Not Federate",
			fmt.Sprintf("The last refresh found that the workloads of ClusterSPIFFEID %q do not federate as it "+
				"declares: %s. The apply waits until they do; it cannot fix a missing federation or a template that "+
				"fails to render.", plan.Name.ValueString(), strings.Join(found, "; ")))
	}
	plan.FederationProblems = types.ListValueMust(types.StringType, nil)
	checkWorkloadFederation(ctx, r.Data, plan.Cluster, plan.FederatesWith, plan.SPIFFEIDTemplate, plan.SpireServer, &diags)
	if !plan.ClassName.Equal(prior.ClassName) {
		checkClassServed(ctx, r.Data, "ClusterSPIFFEID", plan.Cluster, plan.ClassName, &diags)
	}
	return diags
}
