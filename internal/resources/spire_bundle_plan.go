package resources

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/fastpath"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireserverattr"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

// ModifyPlan derives the id; keeps the prior bundle text when the
// configured one holds the same authorities (the same trust, which SPIRE
// need not be told again), when the configuration gives none (its source
// did not answer) and when the cluster does not answer; records the trust
// domain for the ClusterSPIFFEIDs planned after it; and refuses a trust
// domain the cluster already federates with through a relationship.
func (r *spireBundleResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	spireBundleFast().ModifyPlan(ctx, r.hooks(), req, resp)
}

// Plan is ModifyPlan's work on the model, its fastpath.Hooks: it completes
// plan (the framework's plan after defaults and attribute plan modifiers)
// from config and the prior state (nil when creating).
func (r *spireBundleResource) Plan(ctx context.Context, plan *spireBundleResourceModel, config spireBundleResourceModel,
	state *spireBundleResourceModel, _ fastpath.PrivateGetter) diag.Diagnostics {
	var diags diag.Diagnostics
	if !r.Data.CheckCluster(plan.Cluster, path.Root("cluster"), &diags) {
		return diags
	}
	if plan.Cluster.IsUnknown() || plan.TrustDomain.IsUnknown() {
		plan.ID = types.StringUnknown()
	} else {
		plan.ID = types.StringValue(resourceID(plan.Cluster, plan.TrustDomain.ValueString()))
	}
	configured := config.Bundle
	// Terraform accepts the prior value in place of the configured one
	// when the provider returns it unchanged.
	sameTrustDomain := state != nil && state.TrustDomain.Equal(plan.TrustDomain)
	if configured.IsNull() && !sameTrustDomain {
		validate.AttributeError(&diags, path.Root("bundle"), "No Bundle to Carry", fmt.Sprintf(
			"bundle is null and this resource has set no bundle of %s yet, so there is none to keep. Give the peer's "+
				"SPIFFE bundle; when it comes from a zerotrust_trust_bundle with on_unreachable = \"warn\", the peer's "+
				"cluster did not answer (its warning names it), and the first run must reach it.", plan.TrustDomain))
		return diags
	}
	var client *kube.Client
	silent := false
	if !plan.TrustDomain.IsUnknown() {
		var cancel context.CancelFunc
		ctx, client, cancel, silent = planReach(ctx, r.Data, plan.Cluster, planLookupTimeout, &diags)
		defer cancel()
	}
	switch {
	case configured.IsUnknown():
		// Known at apply; compared then by the next plan.
	case configured.IsNull():
		// The source did not answer: keep what was carried last.
		plan.Bundle = state.Bundle
	case sameTrustDomain && silent:
		// Nothing can be set where nothing answers; the others go on.
		plan.Bundle = state.Bundle
	case sameTrustDomain:
		// The same authorities are the same trust, which SPIRE need not be
		// told again.
		if held := state.parsedBundle(); held != nil && trustbundle.SameAuthorities(held, plan.parsedBundle()) {
			plan.Bundle = state.Bundle
		}
	}
	if plan.Cluster.IsUnknown() || plan.TrustDomain.IsUnknown() {
		return diags
	}
	cluster, td := plan.Cluster.ValueString(), plan.TrustDomain.ValueString()
	planned := plannedFederationsOf(r.Data)
	relationship := planned.addCarried(cluster, td)
	where := fmt.Sprintf("cluster %q", cluster)
	if client != nil {
		where = fmt.Sprintf("cluster %q", client.DisplayName())
		if !relationship {
			// The refresh of this walk asked already (spireViewOf is shared);
			// a SPIRE that does not answer was a warning there.
			if server, d := spireserverattr.ServerFrom(ctx, client, r.Data, plan.SpireServer); !d.HasError() {
				if view, err := spireViewOf(ctx, client, server); err == nil {
					_, relationship = view.Relationships[td]
				}
			}
		}
	}
	if relationship {
		validate.AttributeError(&diags, path.Root("trust_domain"), "Trust Domain Federated Through Its Endpoint",
			fmt.Sprintf("%s federates with %q through a federation relationship (a ClusterFederatedTrustDomain, or "+
				"federates_with of zerotrust_spire_federation), existing or planned before this resource. SPIRE "+
				"refreshes that bundle from the peer's endpoint and would overwrite what this resource sets, which every "+
				"apply would set back. Keep one of the two: remove the relationship where the SPIRE servers reach each "+
				"other, or remove this resource.", where, td))
	}
	return diags
}
