package resources

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/bundlesource"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

// ValidateConfig applies the controller's cross-field rules, which the CRD
// schema itself does not enforce.
func (r *federatedTrustDomainResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var profile types.Object
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("bundle_endpoint_profile"), &profile)...)
	if resp.Diagnostics.HasError() || profile.IsNull() || profile.IsUnknown() {
		return
	}
	var p bundleEndpointProfileModel
	resp.Diagnostics.Append(profile.As(ctx, &p, basetypes.ObjectAsOptions{})...)
	if resp.Diagnostics.HasError() || p.Type.IsUnknown() {
		return
	}
	var td types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("trust_domain"), &td)...)
	// An unknown endpoint_spiffe_id counts as set: https_web refuses any
	// configured value, known or not.
	idSet := !p.EndpointSPIFFEID.IsNull()
	if summary, detail := bundlesource.EndpointSPIFFEIDProblem(p.Type.ValueString(), idSet, td.ValueString()); summary != "" {
		validate.AttributeError(&resp.Diagnostics, path.Root("bundle_endpoint_profile").AtName("endpoint_spiffe_id"), summary, detail)
	}
}

func (r *federatedTrustDomainResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.Data == nil {
		return
	}
	var plan, config federatedTrustDomainResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !r.Data.CheckCluster(plan.Cluster, path.Root("cluster"), &resp.Diagnostics) {
		return
	}
	if config.Name.IsNull() && !plan.TrustDomain.IsUnknown() {
		name := defaultObjectName(plan.TrustDomain.ValueString())
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
			resp.Diagnostics.AddAttributeError(path.Root("name"), "Cannot Derive Object Name",
				fmt.Sprintf("The name derived from trust_domain (%q) is not a valid object name: %s. Set name explicitly.",
					name, strings.Join(msgs, "; ")))
			return
		}
		plan.Name = types.StringValue(name)
	}
	creating := req.State.Raw.IsNull()
	if config.ClassName.IsNull() {
		var state federatedTrustDomainResourceModel
		if !creating {
			resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		}
		written, d := classNameWritten(ctx, req.Private)
		resp.Diagnostics.Append(d...)
		if creating || written {
			plan.ClassName = optionalString(r.Data.SpireClassName)
		} else {
			plan.ClassName = state.ClassName
		}
	}
	if plan.Name.IsUnknown() {
		plan.ID = types.StringUnknown()
	} else {
		plan.ID = types.StringValue(resourceID(plan.Cluster, plan.Name.ValueString()))
	}
	if creating {
		r.planCheckUnique(ctx, plan, &resp.Diagnostics)
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	checkPlannedApply(ctx, r.Data, req, resp, plannedApply{Kind: kube.ClusterFederatedTrustDomain,
		Object: func() (*unstructured.Unstructured, bool) {
			// What Update sends: no bundle, and className only when configured or written before.
			toApply := plan
			if written, d := classNameWritten(ctx, req.Private); config.ClassName.IsNull() && (d.HasError() || !written) {
				toApply.ClassName = types.StringNull()
			}
			obj, d := federatedTrustDomainObject(ctx, toApply, false)
			return obj, !d.HasError()
		}})
}

// planCheckUnique runs the duplicate checks of Create at plan time, when the
// cluster's connection is known, it answers and it serves the CRD; otherwise
// (a cluster or CRD created in the same apply) Create checks before it writes.
// At plan only objects this provider did not apply count as duplicates: one
// it manages may be about to go in the same apply (a renamed resource is
// destroyed before its replacement is created), so Create judges those.
func (r *federatedTrustDomainResource) planCheckUnique(ctx context.Context, plan federatedTrustDomainResourceModel, diags *diag.Diagnostics) {
	key := providerdata.ClusterKey(plan.Cluster)
	if plan.Cluster.IsUnknown() || plan.Name.IsUnknown() || plan.TrustDomain.IsUnknown() || r.Data.Clusters.IsUnknown(key) {
		return
	}
	client, err := r.Data.Clusters.Client(key)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, planLookupTimeout)
	defer cancel()
	if served, err := client.Served(ctx, kube.ClusterFederatedTrustDomain); err != nil || !served {
		return
	}
	items, err := client.ListOnce(ctx, kube.ClusterFederatedTrustDomain)
	if err != nil {
		return
	}
	checkUniqueAmong(ctx, items, client, plan.Name.ValueString(), plan.TrustDomain.ValueString(), true, diags)
}

// defaultObjectName derives an object name from a trust domain: trust domains
// may contain underscores, object names may not.
func defaultObjectName(td string) string {
	return strings.ReplaceAll(td, "_", "-")
}
