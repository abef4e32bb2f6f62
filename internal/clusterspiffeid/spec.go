// Package clusterspiffeid is the one mapping between a spire-controller-manager
// ClusterSPIFFEID's spec and the attributes that hold it, served by both
// zerotrust_cluster_spiffe_id (resource) and zerotrust_cluster_spiffe_id
// (data source): the Spec model both embed, its attributes in each schema
// (schema.go) and the conversion between Spec and object (this file,
// selector.go). Because both read an object through SetFromObject, an object
// reads as the same values of the same types in the resource's state after
// import and in the data source.
package clusterspiffeid

import (
	"context"
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/durationtype"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
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
	out := texts(s.FederatesWith)
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
		"dnsNameTemplates":          texts(s.DNSNameTemplates),
		"workloadSelectorTemplates": texts(s.WorkloadSelectorTemplates),
	} {
		if v != nil {
			spec[field] = anySlice(v)
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
	s.SPIFFEIDTemplate = types.StringValue(text(spec["spiffeIDTemplate"]))
	var d diag.Diagnostics
	s.PodSelector, d = selectorFromObject(ctx, spec["podSelector"])
	diags.Append(d...)
	s.NamespaceSelector, d = selectorFromObject(ctx, spec["namespaceSelector"])
	diags.Append(d...)
	s.FederatesWith = keepEmptySet(s.FederatesWith, setOrNull(fieldTexts(spec, "federatesWith")))
	s.DNSNameTemplates = listOrNull(fieldTexts(spec, "dnsNameTemplates"))
	s.WorkloadSelectorTemplates = listOrNull(fieldTexts(spec, "workloadSelectorTemplates"))
	s.TTL = durationtype.Value{StringValue: keepEmpty(s.TTL.StringValue, spec["ttl"])}
	s.JWTTTL = durationtype.Value{StringValue: keepEmpty(s.JWTTTL.StringValue, spec["jwtTtl"])}
	s.Hint = keepEmpty(s.Hint, spec["hint"])
	s.ClassName = types.StringValue(text(spec["className"]))
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
	if s := text(v); s != "" {
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

// texts reads a list or set of strings; null or unknown elements (a value
// known only at apply) are left out.
func texts(v interface {
	IsNull() bool
	IsUnknown() bool
	Elements() []attr.Value
}) []string {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	out := make([]string, 0, len(v.Elements()))
	for _, e := range v.Elements() {
		if s, ok := e.(types.String); ok && !s.IsNull() && !s.IsUnknown() {
			out = append(out, s.ValueString())
		}
	}
	return out
}

// text is a field's value as a string ("" for none).
func text(v any) string {
	switch s := v.(type) {
	case nil:
		return ""
	case string:
		return s
	default:
		return fmt.Sprint(s)
	}
}

// fieldTexts is the list of strings in field key of m; nil when absent.
func fieldTexts(m map[string]any, key string) []string {
	items, ok := m[key].([]any)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(items))
	for _, item := range items {
		out = append(out, text(item))
	}
	return out
}

// anySlice is values as an unstructured object holds a list of strings.
func anySlice(values []string) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = v
	}
	return out
}

// listOrNull is the list of items, null for nil items.
func listOrNull(items []string) types.List {
	if items == nil {
		return types.ListNull(types.StringType)
	}
	values := make([]attr.Value, len(items))
	for i, s := range items {
		values[i] = types.StringValue(s)
	}
	return types.ListValueMust(types.StringType, values)
}

// setOrNull is the set of items, null for none: spire-controller-manager
// omits an empty federatesWith, so an empty set and none are the same.
func setOrNull(items []string) types.Set {
	if len(items) == 0 {
		return types.SetNull(types.StringType)
	}
	values := make([]attr.Value, len(items))
	for i, s := range items {
		values[i] = types.StringValue(s)
	}
	return types.SetValueMust(types.StringType, values)
}
