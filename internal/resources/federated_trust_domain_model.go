package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

type federatedTrustDomainResourceModel struct {
	ID                    types.String   `tfsdk:"id"`
	Cluster               types.String   `tfsdk:"cluster"`
	Name                  types.String   `tfsdk:"name"`
	TrustDomain           types.String   `tfsdk:"trust_domain"`
	BundleEndpointURL     types.String   `tfsdk:"bundle_endpoint_url"`
	BundleEndpointProfile types.Object   `tfsdk:"bundle_endpoint_profile"`
	TrustDomainBundle     types.String   `tfsdk:"trust_domain_bundle"`
	ClassName             types.String   `tfsdk:"class_name"`
	ForceConflicts        types.Bool     `tfsdk:"force_conflicts"`
	WaitForBundle         types.Bool     `tfsdk:"wait_for_bundle"`
	DeleteBundleOnDestroy types.Bool     `tfsdk:"delete_bundle_on_destroy"`
	CheckSpire            types.Bool     `tfsdk:"check_spire"`
	SpireTrust            types.String   `tfsdk:"spire_trust"`
	SpireServer           types.Object   `tfsdk:"spire_server"`
	Timeouts              timeouts.Value `tfsdk:"timeouts"`
}

type bundleEndpointProfileModel struct {
	Type             types.String `tfsdk:"type"`
	EndpointSPIFFEID types.String `tfsdk:"endpoint_spiffe_id"`
}

func federatedTrustDomainObjectFromModel(ctx context.Context, m federatedTrustDomainResourceModel, withBundle bool) (*unstructured.Unstructured, diag.Diagnostics) {
	var p bundleEndpointProfileModel
	diags := m.BundleEndpointProfile.As(ctx, &p, basetypes.ObjectAsOptions{})
	profile := map[string]any{"type": p.Type.ValueString()}
	if v := p.EndpointSPIFFEID.ValueString(); v != "" {
		profile["endpointSPIFFEID"] = v
	}
	spec := map[string]any{
		"trustDomain":           m.TrustDomain.ValueString(),
		"bundleEndpointURL":     m.BundleEndpointURL.ValueString(),
		"bundleEndpointProfile": profile,
	}
	if v := m.ClassName.ValueString(); v != "" {
		spec["className"] = v
	}
	if v := m.TrustDomainBundle.ValueString(); withBundle && v != "" {
		spec["trustDomainBundle"] = v
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	obj.SetName(m.Name.ValueString())
	return obj, diags
}

// federatedTrustDomainStateFromObject is the state of an adopted object, the
// one ImportState stores and the list resource returns, so that importing a
// listed object and the configuration generated from it agree.
func federatedTrustDomainStateFromObject(ctx context.Context, cluster types.String, obj *unstructured.Unstructured) (federatedTrustDomainResourceModel, diag.Diagnostics) {
	state := federatedTrustDomainResourceModel{Cluster: cluster, TrustDomainBundle: types.StringNull()}
	diags := setFederatedTrustDomainFromObject(ctx, &state, obj)
	// The bundle the object still carries, if any, is the best record of how
	// it was bootstrapped; Read never adopts it later.
	if v, _, _ := unstructured.NestedString(obj.Object, "spec", "trustDomainBundle"); v != "" {
		state.TrustDomainBundle = types.StringValue(v)
	}
	return state, diags
}

// setFederatedTrustDomainFromObject copies what the cluster holds into the model, so edits made
// outside Terraform show up as a plan. trust_domain_bundle stays as it is:
// it is bootstrap input, not a description of the object.
func setFederatedTrustDomainFromObject(_ context.Context, m *federatedTrustDomainResourceModel, obj *unstructured.Unstructured) diag.Diagnostics {
	var diags diag.Diagnostics
	// Read in place: NestedMap would deep-copy the spec for reads only.
	specField, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec")
	spec, _ := specField.(map[string]any)
	str := func(fields ...string) string {
		v, _, _ := unstructured.NestedString(spec, fields...)
		return v
	}
	m.Name = types.StringValue(obj.GetName())
	m.ID = types.StringValue(resourceID(m.Cluster, obj.GetName()))
	m.TrustDomain = types.StringValue(str("trustDomain"))
	m.BundleEndpointURL = types.StringValue(str("bundleEndpointURL"))
	// "" in the configuration means "no class", which the API stores as absent.
	if className := str("className"); className != "" || !m.ClassName.Equal(types.StringValue("")) {
		m.ClassName = optionalString(className)
	}
	profile, d := types.ObjectValue(federatedTrustDomainObjectAttrTypes("bundle_endpoint_profile"), map[string]attr.Value{
		"type":               types.StringValue(str("bundleEndpointProfile", "type")),
		"endpoint_spiffe_id": optionalString(str("bundleEndpointProfile", "endpointSPIFFEID")),
	})
	diags.Append(d...)
	m.BundleEndpointProfile = profile
	for _, b := range []*types.Bool{&m.ForceConflicts, &m.WaitForBundle} {
		if b.IsNull() || b.IsUnknown() {
			*b = types.BoolValue(false)
		}
	}
	if m.DeleteBundleOnDestroy.IsNull() || m.DeleteBundleOnDestroy.IsUnknown() {
		m.DeleteBundleOnDestroy = types.BoolValue(deleteBundleOnDestroyDefault)
	}
	if m.CheckSpire.IsNull() || m.CheckSpire.IsUnknown() {
		m.CheckSpire = types.BoolValue(true)
	}
	if m.SpireTrust.IsUnknown() {
		m.SpireTrust = types.StringNull()
	}
	if m.Timeouts.IsNull() || m.Timeouts.IsUnknown() {
		m.Timeouts = timeouts.Value{Object: types.ObjectNull(federatedTrustDomainObjectAttrTypes("timeouts"))}
	}
	if m.SpireServer.IsNull() || m.SpireServer.IsUnknown() {
		m.SpireServer = types.ObjectNull(federatedTrustDomainObjectAttrTypes("spire_server"))
	}
	if m.TrustDomainBundle.IsUnknown() {
		m.TrustDomainBundle = types.StringNull()
	}
	return diags
}

// classNameWritten reads from the ownership record whether this provider's
// field manager applied spec.className.
func classNameWritten(ctx context.Context, private privateGetter) (bool, diag.Diagnostics) {
	rec, diags, _ := readOwnership(ctx, private)
	return rec.held(federatedTrustDomainFieldClassName), diags
}

// recordClassNameWritten reads from the object's managed fields whether
// manager applied spec.className, and keeps the answer in private state.
func recordClassNameWritten(ctx context.Context, private privateSetter, obj *unstructured.Unstructured, manager string) diag.Diagnostics {
	return writeOwnership(ctx, private, classNameOwnership(appliesClassName(&kube.Refreshed{Object: obj}, manager)))
}

// classNameOwnership is the ownership record of an object whose
// spec.className the provider did or did not write.
func classNameOwnership(written bool) ownershipRecord {
	if written {
		return ownershipRecord{Held: []string{federatedTrustDomainFieldClassName}}
	}
	return ownershipRecord{Held: []string{}}
}

// appliesClassName reports whether manager's server-side apply owns
// spec.className of obj (managed fields, not values: a className another
// manager changed since then is theirs).
func appliesClassName(obj *kube.Refreshed, manager string) bool {
	// A field the object does not hold has no owner. Checked first because
	// decoding managedFields is the dearest part of a Read (run per object
	// on every refresh).
	classNamePath := []string{"spec", "className"}
	if _, found, _ := unstructured.NestedFieldNoCopy(obj.Object.Object, classNamePath...); !found {
		return false
	}
	o := applier(manager)
	o.objectOnly = true
	return o.holdsIn(obj.ManagedFields(), classNamePath)
}
