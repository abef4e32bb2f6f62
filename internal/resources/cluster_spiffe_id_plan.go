package resources

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/clusterspiffeid"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
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
		plan.ClassName = types.StringValue(r.Data.SpireClassName)
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
		checkClassServed(ctx, r.Data, plan.Cluster, plan.ClassName, &resp.Diagnostics)
	}
}

// checkClassServed warns when class, planned for a new object or a changed
// class_name, is not the provider's spire.class_name and nothing shows
// that a controller serves it: spire-controller-manager ignores objects of
// another class, so their workloads get no entries and the apply waits out
// its timeout. The evidence is a ClusterSPIFFEID of that class whose
// status.stats a controller wrote. The provider's class is trusted as
// stated; a cluster that cannot be listed gives no warning.
func checkClassServed(ctx context.Context, data *providerdata.Data, cluster, class types.String, diags *diag.Diagnostics) {
	if class.IsUnknown() || class.IsNull() || cluster.IsUnknown() || class.ValueString() == data.SpireClassName {
		return
	}
	ctx, client, cancel := planLookup(ctx, data, cluster, planLookupTimeout, diags)
	defer cancel()
	if client == nil {
		return
	}
	items, err := client.ListOnce(ctx, kube.ClusterSPIFFEID)
	if err != nil {
		return
	}
	for _, item := range items {
		c, _, _ := unstructured.NestedString(item.Object, "spec", "className")
		if _, rendered, _ := unstructured.NestedMap(item.Object, "status", "stats"); rendered && c == class.ValueString() {
			return
		}
	}
	name := fmt.Sprintf("%q", class.ValueString())
	if class.ValueString() == "" {
		name = "none (no spec.className)"
	}
	provider := fmt.Sprintf("%q", data.SpireClassName)
	if data.SpireClassName == "" {
		provider = "unset"
	}
	diags.AddAttributeWarning(path.Root("class_name"), "No Controller Known to Serve This Class",
		fmt.Sprintf("The class of this ClusterSPIFFEID is %s, but the provider's spire.class_name is %s, and no "+
			"ClusterSPIFFEID of that class on cluster %q has been rendered by a spire-controller-manager (status.stats). "+
			"A controller ignores objects of another class than its own (its className; class-less objects only with "+
			"watchClassless), so unless one serves this class, the selected workloads get no entries and the apply "+
			"waits until its timeout. Set class_name to the class the cluster's controller serves, or leave it unset "+
			"to use the provider's.", name, provider, client.DisplayName()))
}
