package resources

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/domainverification"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
)

// ModifyPlan names the object (completeDomainVerification), and dry-runs
// an update of an object this provider wrote.
func (r *domainVerificationResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	plan, _, ok := r.planned(ctx, req, resp)
	if !ok || req.State.Raw.IsNull() {
		return
	}
	var adopted types.Bool
	if resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("adopted"), &adopted)...); adopted.ValueBool() {
		return // nothing is ever applied to an adopted object
	}
	checkPlannedApply(ctx, r.Data, req, resp, plannedApply{Kind: domainverification.Kind(plan.APIVersion.ValueString()),
		Outputs: []string{"token", "txt_record_value", "verified", "last_checked", "next_verification", "message"},
		Object: func() (*unstructured.Unstructured, bool) {
			return domainverification.Object(plan.Name.ValueString(), plan.Domain.ValueString()), true
		}})
}

// completeDomainVerification is the descriptor's completing: the name
// (configured, kept, or derived from the domain) and TXT record name, and
// on a create what planExisting finds.
func completeDomainVerification(ctx context.Context, data *providerdata.Data, plan *domainVerificationResourceModel,
	config domainVerificationResourceModel, state *domainVerificationResourceModel, diags *diag.Diagnostics,
) {
	if !plan.Domain.IsUnknown() {
		switch {
		case !config.Name.IsNull():
		case state != nil && state.Domain.Equal(plan.Domain):
			// The object keeps its name, which an adopted one chose itself.
			plan.Name = state.Name
		default:
			plan.Name = types.StringValue(domainverification.DefaultName(plan.Domain.ValueString()))
		}
		plan.TXTRecordName = plan.Domain
	}
	if state == nil {
		planExisting(ctx, data, plan, config, diags)
	}
}

// planExisting plans `adopted` for a new resource. With adopt_existing it
// looks for the object to adopt when the cluster can be asked: by name, or
// with name unset by domain, whose object then names the resource. Without
// it, an object another manager made fails the plan as it would fail Create.
// When the cluster cannot be asked (a connection known only at apply, a CRD
// installed in the same apply), Create decides and adopted stays unknown.
func planExisting(ctx context.Context, data *providerdata.Data, plan *domainVerificationResourceModel,
	config domainVerificationResourceModel, diags *diag.Diagnostics) {
	adopt := plan.AdoptExisting.ValueBool()
	if adopt || plan.AdoptExisting.IsUnknown() {
		plan.Adopted = types.BoolUnknown()
	} else {
		plan.Adopted = types.BoolValue(false)
	}
	if plan.Domain.IsUnknown() || plan.Name.IsUnknown() || plan.AdoptExisting.IsUnknown() {
		return
	}
	ctx, client, cancel := planLookup(ctx, data, plan.Cluster, planApplyTimeout, diags)
	defer cancel()
	if client == nil {
		return
	}
	kind := domainverification.Kind(plan.APIVersion.ValueString())
	domain := plan.Domain.ValueString()
	var existing *unstructured.Unstructured
	if adopt && config.Name.IsNull() {
		items, err := client.List(ctx, kind, "")
		if err != nil {
			if d, ok := kube.NotCheckedWarning(err, "which DomainVerification of domain "+domain+" adopt_existing would adopt (the apply creates one named after the domain)"); ok {
				diags.Append(d)
			}
			return
		}
		existing = adoptableByDomain(items, domain, client.FieldManager, diags)
	} else {
		var err error
		if existing, err = client.Get(ctx, kind, "", plan.Name.ValueString()); err != nil {
			return
		}
	}
	if existing == nil || diags.HasError() {
		return
	}
	if applier(client.FieldManager).wrote(existing) {
		// This provider's own object may be about to go in the same apply (a
		// replacement destroys it first): Create judges it.
		plan.Adopted = types.BoolValue(false)
		return
	}
	checkExistingDV(existing, client, *plan, diags)
	if diags.HasError() {
		return
	}
	plan.Name = types.StringValue(existing.GetName())
	plan.Adopted = types.BoolValue(true)
}

// adoptableByDomain is the object another manager made for domain, nil when
// there is none. Two of them leave the choice to the user.
func adoptableByDomain(items []unstructured.Unstructured, domain, manager string, diags *diag.Diagnostics) *unstructured.Unstructured {
	var found *unstructured.Unstructured
	for i := range items {
		obj := &items[i]
		if domainverification.Domain(obj) != domain || obj.GetDeletionTimestamp() != nil || applier(manager).wrote(obj) {
			continue
		}
		if found != nil {
			diags.AddAttributeError(path.Root("name"), "Several DomainVerifications To Adopt", fmt.Sprintf(
				"DomainVerifications %q and %q both verify %q. Set name to the one to adopt.",
				found.GetName(), obj.GetName(), domain))
			return nil
		}
		found = obj
	}
	return found
}

// checkExistingDV is what Create and the plan check about an object that
// already exists under the planned name: it must verify the same domain
// (spec.domain is immutable), and unless adopt_existing is set it must have
// been made by this provider (a create whose response never reached the
// state), because taking over another manager's object silently would hand
// this configuration their token.
func checkExistingDV(existing *unstructured.Unstructured, client *kube.Client, plan domainVerificationResourceModel, diags *diag.Diagnostics) {
	name, domain := existing.GetName(), plan.Domain.ValueString()
	if got := domainverification.Domain(existing); got != domain {
		diags.AddAttributeError(path.Root("name"), "Object Already Exists",
			fmt.Sprintf("DomainVerification %q on cluster %q verifies %q, not %q, and its domain cannot change. "+
				"Choose another name, or delete that object first.", name, client.DisplayName(), got, domain))
		return
	}
	if plan.AdoptExisting.ValueBool() {
		return
	}
	adoptGuard(existing, client, path.Root("adopt_existing"), fmt.Sprintf(
		"A DomainVerification named %q (domain %q) already exists on cluster %q and was not created by this "+
			"provider (in Kuadrant's ingress flow the webhook creates it). Set adopt_existing = true to adopt it: "+
			"the provider then writes nothing to it and destroy leaves it in place. Or import it "+
			"(terraform import ... %s), or choose another name.",
		name, domain, client.DisplayName(), resourceID(clusterValue(client.Name), name)), diags)
}
