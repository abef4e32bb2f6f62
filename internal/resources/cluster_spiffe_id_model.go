package resources

import (
	"context"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/durationtype"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

type clusterSPIFFEIDResourceModel struct {
	ID                        types.String       `tfsdk:"id"`
	Cluster                   types.String       `tfsdk:"cluster"`
	Name                      types.String       `tfsdk:"name"`
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
	SpireServer               types.Object       `tfsdk:"spire_server"`
	FederationProblems        types.List         `tfsdk:"federation_problems"`
	ForceConflicts            types.Bool         `tfsdk:"force_conflicts"`
	Timeouts                  timeouts.Value     `tfsdk:"timeouts"`
}

// describe names the object in messages: "ClusterSPIFFEID "web" on cluster "east"".
func (m clusterSPIFFEIDResourceModel) describe(clusterName string) string {
	return "ClusterSPIFFEID \"" + m.Name.ValueString() + "\" on cluster \"" + clusterName + "\""
}

// clusterSPIFFEIDObjectIdentity is the identity of the object m names.
func clusterSPIFFEIDObjectIdentity(m clusterSPIFFEIDResourceModel) objectIdentity {
	return objectIdentity{Cluster: m.Cluster.ValueString(), Name: m.Name.ValueString()}
}

// federatesWith is the configured trust domains, sorted.
func (m clusterSPIFFEIDResourceModel) federatesWith() []string {
	out := stringsOf(m.FederatesWith)
	slices.Sort(out)
	return out
}

// clusterSPIFFEIDObjectFromModel is the whole object the resource applies:
// every spec field it manages, the unset ones left out.
func clusterSPIFFEIDObjectFromModel(ctx context.Context, m clusterSPIFFEIDResourceModel) (*unstructured.Unstructured, diag.Diagnostics) {
	var diags diag.Diagnostics
	spec := map[string]any{"spiffeIDTemplate": m.SPIFFEIDTemplate.ValueString()}
	for field, sel := range map[string]types.Object{"podSelector": m.PodSelector, "namespaceSelector": m.NamespaceSelector} {
		if v, d := labelSelectorToObject(ctx, sel); v != nil {
			spec[field] = v
		} else {
			diags.Append(d...)
		}
	}
	for field, v := range map[string][]string{
		"federatesWith":             m.federatesWith(),
		"dnsNameTemplates":          stringsOf(m.DNSNameTemplates),
		"workloadSelectorTemplates": stringsOf(m.WorkloadSelectorTemplates),
	} {
		if v != nil {
			spec[field] = anySlice(v)
		}
	}
	for field, v := range map[string]types.String{
		"ttl": m.TTL.StringValue, "jwtTtl": m.JWTTTL.StringValue, "hint": m.Hint, "className": m.ClassName,
	} {
		if !v.IsNull() && !v.IsUnknown() && v.ValueString() != "" {
			spec[field] = v.ValueString()
		}
	}
	for field, v := range map[string]types.Bool{
		"fallback": m.Fallback, "admin": m.Admin, "downstream": m.Downstream, "autoPopulateDNSNames": m.AutoPopulateDNSNames,
	} {
		if v.ValueBool() {
			spec[field] = true
		}
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	obj.SetAPIVersion(kube.ClusterSPIFFEID.APIVersion())
	obj.SetKind(kube.ClusterSPIFFEID.Kind)
	obj.SetName(m.Name.ValueString())
	return obj, diags
}

// setClusterSPIFFEIDFromObject reads the object into m. A field the object
// leaves out reads as null, except a false flag or "" the prior value set
// explicitly, which the object cannot tell from unset.
func setClusterSPIFFEIDFromObject(ctx context.Context, m *clusterSPIFFEIDResourceModel, obj *unstructured.Unstructured) diag.Diagnostics {
	var diags diag.Diagnostics
	m.Name = types.StringValue(obj.GetName())
	m.ID = types.StringValue(resourceID(m.Cluster, obj.GetName()))
	spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
	m.SPIFFEIDTemplate = types.StringValue(objText(spec["spiffeIDTemplate"]))
	var d diag.Diagnostics
	m.PodSelector, d = labelSelectorFromObject(ctx, "pod_selector", spec["podSelector"])
	diags.Append(d...)
	m.NamespaceSelector, d = labelSelectorFromObject(ctx, "namespace_selector", spec["namespaceSelector"])
	diags.Append(d...)
	m.FederatesWith = keepEmptySet(m.FederatesWith, stringSetOrNull(objStrings(spec, "federatesWith")))
	m.DNSNameTemplates = stringListOrNull(objStrings(spec, "dnsNameTemplates"))
	m.WorkloadSelectorTemplates = stringListOrNull(objStrings(spec, "workloadSelectorTemplates"))
	m.TTL = durationtype.Value{StringValue: keepEmpty(m.TTL.StringValue, spec["ttl"])}
	m.JWTTTL = durationtype.Value{StringValue: keepEmpty(m.JWTTTL.StringValue, spec["jwtTtl"])}
	m.Hint = keepEmpty(m.Hint, spec["hint"])
	m.ClassName = types.StringValue(objText(spec["className"]))
	m.Fallback = keepFalse(m.Fallback, spec["fallback"])
	m.Admin = keepFalse(m.Admin, spec["admin"])
	m.Downstream = keepFalse(m.Downstream, spec["downstream"])
	m.AutoPopulateDNSNames = keepFalse(m.AutoPopulateDNSNames, spec["autoPopulateDNSNames"])
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
// prior "" when that was set).
func keepEmpty(prior types.String, v any) types.String {
	if s := objText(v); s != "" {
		if !prior.IsNull() && !prior.IsUnknown() && durationtype.NewValue(prior.ValueString()).Equal(durationtype.NewValue(s)) {
			return prior
		}
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

type labelSelectorModel struct {
	MatchLabels      types.Map  `tfsdk:"match_labels"`
	MatchExpressions types.List `tfsdk:"match_expressions"`
}

type matchExpressionModel struct {
	Key      types.String `tfsdk:"key"`
	Operator types.String `tfsdk:"operator"`
	Values   types.List   `tfsdk:"values"`
}

// labelSelectorToObject is the Kubernetes form of a selector value; nil for
// a null or unknown one.
func labelSelectorToObject(ctx context.Context, v types.Object) (map[string]any, diag.Diagnostics) {
	if v.IsNull() || v.IsUnknown() {
		return nil, nil
	}
	var sel labelSelectorModel
	diags := v.As(ctx, &sel, basetypes.ObjectAsOptions{})
	out := map[string]any{}
	if !sel.MatchLabels.IsNull() && !sel.MatchLabels.IsUnknown() {
		labels := map[string]string{}
		diags.Append(sel.MatchLabels.ElementsAs(ctx, &labels, false)...)
		m := map[string]any{}
		for k, v := range labels {
			m[k] = v
		}
		out["matchLabels"] = m
	}
	if !sel.MatchExpressions.IsNull() && !sel.MatchExpressions.IsUnknown() {
		var exprs []matchExpressionModel
		diags.Append(sel.MatchExpressions.ElementsAs(ctx, &exprs, false)...)
		var list []any
		for _, e := range exprs {
			item := map[string]any{"key": e.Key.ValueString(), "operator": e.Operator.ValueString()}
			if vals := stringsOf(e.Values); vals != nil {
				item["values"] = anySlice(vals)
			}
			list = append(list, item)
		}
		out["matchExpressions"] = list
	}
	return out, diags
}

// labelSelectorFromObject reads a selector of the object into the selector
// attribute named; null when absent.
func labelSelectorFromObject(ctx context.Context, attribute string, v any) (types.Object, diag.Diagnostics) {
	selectorTypes := clusterSPIFFEIDObjectAttrTypes(attribute)
	expressionType := types.ObjectType{AttrTypes: clusterSPIFFEIDObjectAttrTypes(attribute, "match_expressions")}
	m, ok := v.(map[string]any)
	if !ok {
		return types.ObjectNull(selectorTypes), nil
	}
	var diags diag.Diagnostics
	sel := labelSelectorModel{
		MatchLabels:      types.MapNull(types.StringType),
		MatchExpressions: types.ListNull(expressionType),
	}
	if labels, ok := m["matchLabels"].(map[string]any); ok && len(labels) > 0 {
		s := map[string]string{}
		for k, v := range labels {
			s[k] = objText(v)
		}
		var d diag.Diagnostics
		sel.MatchLabels, d = types.MapValueFrom(ctx, types.StringType, s)
		diags.Append(d...)
	}
	if items, ok := m["matchExpressions"].([]any); ok && len(items) > 0 {
		exprs := make([]matchExpressionModel, 0, len(items))
		for _, item := range items {
			e, _ := item.(map[string]any)
			exprs = append(exprs, matchExpressionModel{
				Key: types.StringValue(objText(e["key"])), Operator: types.StringValue(objText(e["operator"])),
				Values: stringListOrNull(objStrings(e, "values")),
			})
		}
		var d diag.Diagnostics
		sel.MatchExpressions, d = types.ListValueFrom(ctx, expressionType, exprs)
		diags.Append(d...)
	}
	obj, d := types.ObjectValueFrom(ctx, selectorTypes, sel)
	diags.Append(d...)
	return obj, diags
}

// clusterSPIFFEIDStateFromObject is the state import and list both store for obj.
func clusterSPIFFEIDStateFromObject(ctx context.Context, cluster types.String, obj *unstructured.Unstructured) (clusterSPIFFEIDResourceModel, diag.Diagnostics) {
	m := clusterSPIFFEIDResourceModel{
		Cluster:            cluster,
		ForceConflicts:     types.BoolValue(false),
		SpireServer:        types.ObjectNull(clusterSPIFFEIDObjectAttrTypes("spire_server")),
		FederationProblems: types.ListValueMust(types.StringType, nil),
		Timeouts:           timeouts.Value{Object: types.ObjectNull(clusterSPIFFEIDObjectAttrTypes("timeouts"))},
	}
	diags := setClusterSPIFFEIDFromObject(ctx, &m, obj)
	return m, diags
}

// clusterSPIFFEIDObjectAttrTypes are the attribute types of the object
// attribute at a path, read from the schema.
var clusterSPIFFEIDObjectAttrTypes = schemaTypesOf(func() attr.Type {
	return clusterSPIFFEIDSchema(context.Background()).Type()
})
