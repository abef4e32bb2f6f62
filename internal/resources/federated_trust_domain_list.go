package resources

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// NewFederatedTrustDomainListResource lists zerotrust_federated_trust_domain objects.
func NewFederatedTrustDomainListResource() list.ListResource {
	return newListShell(federatedTrustDomainType,
		"Lists the `ClusterFederatedTrustDomain` objects of the provider's clusters that "+
			"`zerotrust_federated_trust_domain` can manage, for `terraform query` and import. Objects the resource "+
			"would refuse as configuration (an invalid trust domain, endpoint or bundle, a profile the controller "+
			"skips) and objects being deleted are left out.",
		map[string]listschema.Attribute{
			"trust_domain": listschema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Only the object that federates with this peer trust domain (`spec.trustDomain`).",
			},
			"class_name": listschema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Only objects of this spire-controller-manager class (`spec.className`). `\"\"` lists the " +
					"objects without a class, as `class_name = \"\"` of the resource means no class; unset lists every class.",
			},
		},
		func(f federatedTrustDomainListConfig) listConverter { return f.convert })
}

type federatedTrustDomainListConfig struct {
	listScope
	TrustDomain types.String `tfsdk:"trust_domain"`
	ClassName   types.String `tfsdk:"class_name"`
}

// convert makes a list result of obj: the identity, a display name naming the
// peer trust domain, and the state ImportState would store.
func (f federatedTrustDomainListConfig) convert(ctx context.Context, t listTarget, obj *unstructured.Unstructured, includeResource bool) (
	listedObject, bool, diag.Diagnostics,
) {
	td, _, _ := unstructured.NestedString(obj.Object, "spec", "trustDomain")
	className, _, _ := unstructured.NestedString(obj.Object, "spec", "className")
	switch {
	case !f.TrustDomain.IsNull() && td != f.TrustDomain.ValueString(),
		!f.ClassName.IsNull() && className != f.ClassName.ValueString(),
		obj.GetDeletionTimestamp() != nil:
		return listedObject{}, true, nil
	}
	state, diags := federatedTrustDomainStateFromObject(ctx, clusterValue(t.key), obj)
	if !diags.HasError() {
		diags.Append(federatedTrustDomainConfigProblems(ctx, state)...)
	}
	if diags.HasError() {
		var skipped diag.Diagnostics
		skipped.AddWarning("Object Not Listed", fmt.Sprintf("The ClusterFederatedTrustDomain %s cannot be managed "+
			"by zerotrust_federated_trust_domain as it is: %s", resourceID(clusterValue(t.key), obj.GetName()), diags.Errors()[0].Detail()))
		return listedObject{}, true, skipped
	}
	lo := listedObject{
		id:      federatedTrustDomainType.identityOf(state),
		display: fmt.Sprintf("%s (federates with %s)", resourceID(clusterValue(t.key), obj.GetName()), td),
	}
	if includeResource {
		lo.state = &state
	}
	return lo, false, diags
}

// federatedTrustDomainConfigProblems are the errors the resource's
// validation finds in state written as configuration (what `terraform query
// -generate-config-out` does with a listed object): the schema's validators
// of every string attribute, then ValidateConfig. An object with errors
// cannot be managed by the resource as it is, so the list leaves it out.
func federatedTrustDomainConfigProblems(ctx context.Context, state federatedTrustDomainResourceModel) diag.Diagnostics {
	s := federatedTrustDomainSchemaOnce()
	st := tfsdk.State{Schema: s}
	diags := st.Set(ctx, &state)
	if diags.HasError() {
		return diags
	}
	config := tfsdk.Config{Schema: s, Raw: st.Raw}
	check := func(p path.Path, a schema.Attribute) {
		sa, ok := a.(schema.StringAttribute)
		if !ok {
			return
		}
		var v types.String
		diags.Append(config.GetAttribute(ctx, p, &v)...)
		for _, check := range sa.Validators {
			var resp validator.StringResponse
			check.ValidateString(ctx, validator.StringRequest{Path: p, PathExpression: p.Expression(), Config: config, ConfigValue: v}, &resp)
			diags.Append(resp.Diagnostics...)
		}
	}
	for name, a := range s.Attributes {
		check(path.Root(name), a)
		if nested, ok := a.(schema.SingleNestedAttribute); ok {
			for child, ca := range nested.Attributes {
				check(path.Root(name).AtName(child), ca)
			}
		}
	}
	var resp resource.ValidateConfigResponse
	r := &federatedTrustDomainResource{kubeResource[federatedTrustDomainResourceModel]{kubeType: federatedTrustDomainType}}
	r.ValidateConfig(ctx, resource.ValidateConfigRequest{Config: config}, &resp)
	diags.Append(resp.Diagnostics...)
	return diags
}
