package clusterspiffeid

import (
	"context"
	"fmt"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
)

// selectorModel is pod_selector and namespace_selector, a Kubernetes
// LabelSelector.
type selectorModel struct {
	MatchLabels      types.Map  `tfsdk:"match_labels"`
	MatchExpressions types.List `tfsdk:"match_expressions"`
}

type expressionModel struct {
	Key      types.String `tfsdk:"key"`
	Operator types.String `tfsdk:"operator"`
	Values   types.List   `tfsdk:"values"`
}

// selectorTypes are the type of a selector attribute and of one of its
// match_expressions, read from the schema (the same for the resource and the
// data source, which a test checks), so that null and new values cannot
// drift from it.
var selectorTypes = sync.OnceValues(func() (types.ObjectType, attr.Type) {
	selector, ok := resourceSelector("").GetType().(types.ObjectType)
	expressions, isList := selector.AttrTypes["match_expressions"].(types.ListType)
	if !ok || !isList {
		panic(fmt.Sprintf("clusterspiffeid: a selector attribute is a %T, not an object with a list of expressions", resourceSelector("").GetType()))
	}
	return selector, expressions.ElemType
})

// SelectorToObject is the Kubernetes form of a selector value; nil for a
// null or unknown one.
func SelectorToObject(ctx context.Context, v types.Object) (map[string]any, diag.Diagnostics) {
	if v.IsNull() || v.IsUnknown() {
		return nil, nil
	}
	var sel selectorModel
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
		var exprs []expressionModel
		diags.Append(sel.MatchExpressions.ElementsAs(ctx, &exprs, false)...)
		var list []any
		for _, e := range exprs {
			item := map[string]any{"key": e.Key.ValueString(), "operator": e.Operator.ValueString()}
			if vals := providerdata.Strings(e.Values); vals != nil {
				item["values"] = providerdata.AnySlice(vals)
			}
			list = append(list, item)
		}
		out["matchExpressions"] = list
	}
	return out, diags
}

// selectorFromObject reads a selector of the object; null when absent.
func selectorFromObject(ctx context.Context, v any) (types.Object, diag.Diagnostics) {
	selectorType, expressionType := selectorTypes()
	m, ok := v.(map[string]any)
	if !ok {
		return types.ObjectNull(selectorType.AttrTypes), nil
	}
	var diags diag.Diagnostics
	sel := selectorModel{
		MatchLabels:      types.MapNull(types.StringType),
		MatchExpressions: types.ListNull(expressionType),
	}
	if labels := providerdata.FieldStringMap(m, "matchLabels"); len(labels) > 0 {
		var d diag.Diagnostics
		sel.MatchLabels, d = types.MapValueFrom(ctx, types.StringType, labels)
		diags.Append(d...)
	}
	if items, ok := m["matchExpressions"].([]any); ok && len(items) > 0 {
		exprs := make([]expressionModel, 0, len(items))
		for _, item := range items {
			e, _ := item.(map[string]any)
			exprs = append(exprs, expressionModel{
				Key: types.StringValue(providerdata.FieldText(e["key"])), Operator: types.StringValue(providerdata.FieldText(e["operator"])),
				Values: providerdata.StringListOrNull(providerdata.FieldStrings(e, "values")),
			})
		}
		var d diag.Diagnostics
		sel.MatchExpressions, d = types.ListValueFrom(ctx, expressionType, exprs)
		diags.Append(d...)
	}
	obj, d := types.ObjectValueFrom(ctx, selectorType.AttrTypes, sel)
	diags.Append(d...)
	return obj, diags
}
