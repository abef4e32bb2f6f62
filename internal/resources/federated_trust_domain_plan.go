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
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/bundlesource"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/fastpath"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

// ValidateConfig applies the controller's cross-field rules, which the CRD
// schema itself does not enforce.
func (r *federatedTrustDomainResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	r.validated(ctx, req, resp, validateFederatedTrustDomain)
}

func validateFederatedTrustDomain(_ context.Context, config federatedTrustDomainResourceModel, diags *diag.Diagnostics) {
	profile := config.BundleEndpointProfile
	if profile.IsNull() || profile.IsUnknown() {
		return
	}
	typ, _ := profile.Attributes()["type"].(types.String)
	id, _ := profile.Attributes()["endpoint_spiffe_id"].(types.String)
	if typ.IsUnknown() {
		return
	}
	// An unknown endpoint_spiffe_id counts as set: https_web refuses any
	// configured value, known or not.
	idSet := !id.IsNull()
	if summary, detail := bundlesource.EndpointSPIFFEIDProblem(typ.ValueString(), idSet, config.TrustDomain.ValueString()); summary != "" {
		validate.AttributeError(diags, path.Root("bundle_endpoint_profile").AtName("endpoint_spiffe_id"), summary, detail)
	}
	url := config.BundleEndpointURL
	if typ.ValueString() == spireexec.ProfileHTTPSSPIFFE && !url.IsNull() && !url.IsUnknown() {
		if store := bundlesource.ObjectStore(url.ValueString()); store != "" {
			validate.AttributeError(diags, path.Root("bundle_endpoint_profile").AtName("type"), publishedNeedsWeb,
				bundlesource.PublishedHTTPSSPIFFEProblem(url.ValueString(), "an object in "+store))
		}
	}
}

// planRefusePublishedSPIFFE refuses https_spiffe for a URL that a
// zerotrust_spire_server read of this run reports as a published bundle
// (ValidateConfig refuses the clouds' object-store hosts before any read).
func planRefusePublishedSPIFFE(data *providerdata.Data, plan federatedTrustDomainResourceModel, diags *diag.Diagnostics) {
	if data == nil || plan.BundleEndpointProfile.IsNull() || plan.BundleEndpointProfile.IsUnknown() || plan.BundleEndpointURL.IsUnknown() {
		return
	}
	typ, _ := plan.BundleEndpointProfile.Attributes()["type"].(types.String)
	if typ.ValueString() != spireexec.ProfileHTTPSSPIFFE {
		return
	}
	url := plan.BundleEndpointURL.ValueString()
	if td, ok := data.Published.TrustDomain(url); ok {
		validate.AttributeError(diags, path.Root("bundle_endpoint_profile").AtName("type"), publishedNeedsWeb,
			bundlesource.PublishedHTTPSSPIFFEProblem(url, fmt.Sprintf("where the SPIRE server of %q publishes its "+
				"bundle to object storage, as zerotrust_spire_server reports it", td)))
	}
}

// publishedNeedsWeb is the summary of the refusal of https_spiffe for a
// published bundle's URL.
const publishedNeedsWeb = "Published Bundle Needs https_web"

func (r *federatedTrustDomainResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	plan, config, ok := r.planned(ctx, req, resp)
	if !ok {
		return
	}
	planRefusePublishedSPIFFE(r.Data, plan, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	checkPlannedApply(ctx, r.Data, req, resp, plannedApply{Kind: kube.ClusterFederatedTrustDomain,
		Object: func() (*unstructured.Unstructured, bool) {
			// What Update sends: no bundle, and className only when configured or written before.
			toApply := plan
			if written, d := classNameWritten(ctx, req.Private); config.ClassName.IsNull() && (d.HasError() || !written) {
				toApply.ClassName = types.StringNull()
			}
			obj, d := federatedTrustDomainObjectFromModel(ctx, toApply, false)
			return obj, !d.HasError()
		}})
}

// completeFederatedTrustDomain is the descriptor's completing: it records
// the planned federation for the ClusterSPIFFEIDs planned after it, derives
// the name from the trust domain, and refuses a trust domain that a
// zerotrust_spire_federation planned in the same walk federates with too
// (refuseSecondSource, whichever of the two plans first).
func completeFederatedTrustDomain(_ context.Context, data *providerdata.Data, plan *federatedTrustDomainResourceModel,
	config federatedTrustDomainResourceModel, _ *federatedTrustDomainResourceModel, diags *diag.Diagnostics,
) {
	if !plan.Cluster.IsUnknown() && !plan.TrustDomain.IsUnknown() {
		// For the ClusterSPIFFEIDs planned after it, which may federate
		// with this trust domain although the cluster has no object yet.
		planned := plannedFederationsOf(data)
		carried := planned.add(plan.Cluster.ValueString(), plan.TrustDomain.ValueString())
		planned.refuseCarried(plan.Cluster.ValueString(), plan.TrustDomain.ValueString(), carried, path.Root("trust_domain"), diags)
	}
	if config.Name.IsNull() && !plan.TrustDomain.IsUnknown() {
		name := defaultObjectName(plan.TrustDomain.ValueString())
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
			diags.AddAttributeError(path.Root("name"), "Cannot Derive Object Name",
				fmt.Sprintf("The name derived from trust_domain (%q) is not a valid object name: %s. Set name explicitly.",
					name, strings.Join(msgs, "; ")))
			return
		}
		plan.Name = types.StringValue(name)
	}
	if !plan.TrustDomain.IsUnknown() && !plan.Name.IsUnknown() {
		refuseSecondSource(data, plan.Cluster, plan.TrustDomain.ValueString(), throughAPI,
			declaredByFederatedTrustDomain(plan.Cluster, plan.Name.ValueString()), path.Root("trust_domain"), diags)
	}
}

// planFederatedTrustDomain is the descriptor's plan, ModifyPlan's work
// after the prologue, which the fast path runs too: it completes plan (the
// framework's plan after defaults and attribute plan modifiers) from
// config, the prior state (nil when creating) and the private state. The
// API calls it makes are the plan-time duplicate checks of a create.
func planFederatedTrustDomain(ctx context.Context, r *kubeResource[federatedTrustDomainResourceModel], plan *federatedTrustDomainResourceModel,
	config federatedTrustDomainResourceModel, state *federatedTrustDomainResourceModel, private fastpath.PrivateGetter) diag.Diagnostics {
	var diags diag.Diagnostics
	creating := state == nil
	if config.ClassName.IsNull() {
		written, d := classNameWritten(ctx, private)
		diags.Append(d...)
		if creating || written {
			plan.ClassName = optionalString(r.Data.SpireAt(plan.Cluster).ClassName)
		} else {
			plan.ClassName = state.ClassName
		}
	}
	if creating || !plan.ClassName.Equal(state.ClassName) {
		checkClassServed(ctx, r.Data, "ClusterFederatedTrustDomain", plan.Cluster, plan.ClassName, &diags)
	}
	ctx, client, cancel := planLookup(ctx, r.Data, plan.Cluster, planLookupTimeout, &diags)
	defer cancel()
	diags.Append(planSpireTrust(ctx, client, r.Data, plan, config, state)...)
	if creating && client != nil {
		planCheckUnique(ctx, client, *plan, &diags)
	}
	if client != nil {
		warnConfiguredPeer(ctx, r.Data, client, plan.Cluster, plan.TrustDomain, &diags)
	}
	return diags
}

// planCheckUnique runs the duplicate checks of Create at plan time, when the
// cluster's connection is known, it answers and it serves the CRD; otherwise
// (a cluster or CRD created in the same apply) Create checks before it writes.
// At plan only objects this provider did not apply count as duplicates: one
// it manages may be about to go in the same apply (a renamed resource is
// destroyed before its replacement is created), so Create judges those.
func planCheckUnique(ctx context.Context, client *kube.Client, plan federatedTrustDomainResourceModel, diags *diag.Diagnostics) {
	if plan.Name.IsUnknown() || plan.TrustDomain.IsUnknown() {
		return
	}
	if served, err := client.Served(ctx, kube.ClusterFederatedTrustDomain); err != nil || !served {
		return
	}
	items, err := client.ListOnce(ctx, kube.ClusterFederatedTrustDomain)
	if err != nil {
		if d, ok := kube.NotCheckedWarning(err, "that no other ClusterFederatedTrustDomain federates with "+plan.TrustDomain.ValueString()); ok {
			diags.Append(d)
		}
		return
	}
	checkUniqueAmong(ctx, items, client, plan.Name.ValueString(), plan.TrustDomain.ValueString(), true, diags)
}

// defaultObjectName derives an object name from a trust domain: trust domains
// may contain underscores, object names may not.
func defaultObjectName(td string) string {
	return strings.ReplaceAll(td, "_", "-")
}
