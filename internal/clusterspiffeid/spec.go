// Package clusterspiffeid is the one mapping between a spire-controller-manager
// ClusterSPIFFEID's spec and the attributes that hold it, served by both
// zerotrust_cluster_spiffe_id (resource) and zerotrust_cluster_spiffe_id
// (data source): the Spec model both embed, its attributes in each schema
// (schema.go), the conversion between Spec and object (this file,
// selector.go), and what spire-controller-manager refuses of a spec without
// asking the cluster (rules.go). Because both read an object through SetFromObject, an object
// reads as the same values of the same types in the resource's state after
// import and in the data source.
package clusterspiffeid

import (
	"context"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/durationtype"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
)

// Spec is the attributes that hold the object's spec, one for each spec
// field; a resource or data source model embeds it.
type Spec struct {
	SPIFFEIDTemplate          types.String       `tfsdk:"spiffe_id_template"`
	PodSelector               types.Object       `tfsdk:"pod_selector"`
	NamespaceSelector         types.Object       `tfsdk:"namespace_selector"`
	FederatesWith             types.Set          `tfsdk:"federates_with"`
	DNSNameTemplates          types.List         `tfsdk:"dns_name_templates"`
	WorkloadSelectorTemplates types.List         `tfsdk:"workload_selector_templates"`
	TTL                       durationtype.Value `tfsdk:"ttl"`
	JWTTTL                    durationtype.Value `tfsdk:"jwt_ttl"`
	Hint                      types.String       `tfsdk:"hint"`
	Fallback                  types.Bool         `tfsdk:"fallback"`
	Admin                     types.Bool         `tfsdk:"admin"`
	Downstream                types.Bool         `tfsdk:"downstream"`
	AutoPopulateDNSNames      types.Bool         `tfsdk:"auto_populate_dns_names"`
	ClassName                 types.String       `tfsdk:"class_name"`
}

// TrustDomains is federates_with, sorted.
func (s Spec) TrustDomains() []string {
	out := providerdata.Strings(s.FederatesWith)
	slices.Sort(out)
	return out
}

// ObjectFromSpec is the whole object named name that an apply of s sends:
// every spec field, the unset ones left out.
func ObjectFromSpec(ctx context.Context, name string, s Spec) (*unstructured.Unstructured, diag.Diagnostics) {
	var diags diag.Diagnostics
	spec := map[string]any{"spiffeIDTemplate": s.SPIFFEIDTemplate.ValueString()}
	for field, sel := range map[string]types.Object{"podSelector": s.PodSelector, "namespaceSelector": s.NamespaceSelector} {
		if v, d := SelectorToObject(ctx, sel); v != nil {
			spec[field] = v
		} else {
			diags.Append(d...)
		}
	}
	for field, v := range map[string][]string{
		"federatesWith":             s.TrustDomains(),
		"dnsNameTemplates":          providerdata.Strings(s.DNSNameTemplates),
		"workloadSelectorTemplates": providerdata.Strings(s.WorkloadSelectorTemplates),
	} {
		if v != nil {
			spec[field] = providerdata.AnySlice(v)
		}
	}
	for field, v := range map[string]types.String{
		"ttl": s.TTL.StringValue, "jwtTtl": s.JWTTTL.StringValue, "hint": s.Hint, "className": s.ClassName,
	} {
		if !v.IsNull() && !v.IsUnknown() && v.ValueString() != "" {
			spec[field] = v.ValueString()
		}
	}
	for field, v := range map[string]types.Bool{
		"fallback": s.Fallback, "admin": s.Admin, "downstream": s.Downstream, "autoPopulateDNSNames": s.AutoPopulateDNSNames,
	} {
		if v.ValueBool() {
			spec[field] = true
		}
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	obj.SetAPIVersion(kube.ClusterSPIFFEID.APIVersion())
	obj.SetKind(kube.ClusterSPIFFEID.Kind)
	obj.SetName(name)
	return obj, diags
}

// SetFromObject reads the object's spec into s. A field the object leaves
// out reads as null, except a false flag, "" or an empty federates_with that
// s held before, which the object cannot tell from unset; with nothing held
// before (an import, the data source), the object alone decides.
func (s *Spec) SetFromObject(ctx context.Context, obj *unstructured.Unstructured) diag.Diagnostics {
	var diags diag.Diagnostics
	spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
	s.SPIFFEIDTemplate = types.StringValue(providerdata.FieldText(spec["spiffeIDTemplate"]))
	var d diag.Diagnostics
	s.PodSelector, d = selectorFromObject(ctx, spec["podSelector"])
	diags.Append(d...)
	s.NamespaceSelector, d = selectorFromObject(ctx, spec["namespaceSelector"])
	diags.Append(d...)
	s.FederatesWith = keepEmptySet(s.FederatesWith, providerdata.StringSetOrNull(providerdata.FieldStrings(spec, "federatesWith")))
	s.DNSNameTemplates = providerdata.StringListOrNull(providerdata.FieldStrings(spec, "dnsNameTemplates"))
	s.WorkloadSelectorTemplates = providerdata.StringListOrNull(providerdata.FieldStrings(spec, "workloadSelectorTemplates"))
	s.TTL = durationtype.Value{StringValue: keepEmpty(s.TTL.StringValue, spec["ttl"])}
	s.JWTTTL = durationtype.Value{StringValue: keepEmpty(s.JWTTTL.StringValue, spec["jwtTtl"])}
	s.Hint = keepEmpty(s.Hint, spec["hint"])
	s.ClassName = types.StringValue(providerdata.FieldText(spec["className"]))
	s.Fallback = keepFalse(s.Fallback, spec["fallback"])
	s.Admin = keepFalse(s.Admin, spec["admin"])
	s.Downstream = keepFalse(s.Downstream, spec["downstream"])
	s.AutoPopulateDNSNames = keepFalse(s.AutoPopulateDNSNames, spec["autoPopulateDNSNames"])
	return diags
}

// keepFalse is true when the object says so; otherwise the prior value if it
// was an explicit false, else null.
func keepFalse(prior types.Bool, v any) types.Bool {
	if b, _ := v.(bool); b {
		return types.BoolValue(true)
	}
	if !prior.IsNull() && !prior.IsUnknown() && !prior.ValueBool() {
		return prior
	}
	return types.BoolNull()
}

// keepEmpty is the object's string, or null when it has none (or the
// prior "" when that was set). A duration the object spells another way than
// the prior ("1h0m0s" for "1h") is left to durationtype's semantic equality.
func keepEmpty(prior types.String, v any) types.String {
	if s := providerdata.FieldText(v); s != "" {
		return types.StringValue(s)
	}
	if !prior.IsNull() && prior.ValueString() == "" {
		return prior
	}
	return types.StringNull()
}

// keepEmptySet is read, except that an empty prior set stays empty when the
// object has none: a configuration that computes the list (the peers
// federated so far) may give an empty one, which the object cannot tell
// from none.
func keepEmptySet(prior, read types.Set) types.Set {
	if read.IsNull() && !prior.IsNull() && !prior.IsUnknown() && len(prior.Elements()) == 0 {
		return prior
	}
	return read
}
