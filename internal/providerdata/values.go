package providerdata

import (
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/hashicorp/terraform-plugin-framework/types"
)

// The small conversions between API strings and attribute values that the
// provider, its resources and its data sources all make live here, the leaf
// they share, so each has one definition.

// OptionalString maps "" to null, for fields the API omits when empty.
func OptionalString(s string) types.String {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
}

// StringOr is v's value, or def when v is null, unknown or "" (an optional
// attribute whose default depends on the provider's configuration).
func StringOr(v types.String, def string) string {
	if v.IsNull() || v.IsUnknown() || v.ValueString() == "" {
		return def
	}
	return v.ValueString()
}

// ResourceID is "<name>" on the default connection and "<cluster>/<name>"
// otherwise; it doubles as the import ID. Cluster keys may contain "/", names
// may not, so the last "/" separates them.
func ResourceID(cluster types.String, name string) string {
	if cluster.IsNull() || cluster.ValueString() == "" {
		return name
	}
	return cluster.ValueString() + "/" + name
}

// FieldString is m[key] of an unstructured Kubernetes object as a string
// attribute: null when absent, numbers and booleans (an int-or-string) as
// their text.
func FieldString(m map[string]any, key string) types.String {
	v, ok := m[key]
	if !ok || v == nil {
		return types.StringNull()
	}
	if s, ok := v.(string); ok {
		return types.StringValue(s)
	}
	return types.StringValue(fmt.Sprint(v))
}

// FieldInt64 is m[key] as an int64 attribute (JSON numbers decode as int64
// or float64); null when absent or not a number.
func FieldInt64(m map[string]any, key string) types.Int64 {
	switch v := m[key].(type) {
	case int64:
		return types.Int64Value(v)
	case int:
		return types.Int64Value(int64(v))
	case float64:
		return types.Int64Value(int64(v))
	default:
		return types.Int64Null()
	}
}

// DurationOr parses an optional duration attribute, def when it is unset.
// validate.Duration() checks the value at plan time already; this catches a
// value that was unknown then, as an error on attribute p.
func DurationOr(v types.String, def time.Duration, p path.Path, diags *diag.Diagnostics) time.Duration {
	if v.IsNull() || v.IsUnknown() {
		return def
	}
	d, err := time.ParseDuration(v.ValueString())
	if err != nil || d <= 0 {
		diags.AddAttributeError(p, "Invalid Duration", fmt.Sprintf("%q is not a positive duration, such as \"90s\" or \"5m\".", v.ValueString()))
		return def
	}
	return d
}

// Strings reads a list or set of strings; null or unknown elements (a value
// known only at apply) are left out, as is a null or unknown collection.
func Strings(v interface {
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

// FieldText is a field value of an unstructured object as a string ("" for
// none, numbers and booleans as their text).
func FieldText(v any) string {
	switch s := v.(type) {
	case nil:
		return ""
	case string:
		return s
	default:
		return fmt.Sprint(s)
	}
}

// FieldStrings is the list of strings in field key of m; nil when absent.
func FieldStrings(m map[string]any, key string) []string {
	items, ok := m[key].([]any)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(items))
	for _, item := range items {
		out = append(out, FieldText(item))
	}
	return out
}

// FieldStringMap is the map of strings in field key of m; nil when absent.
func FieldStringMap(m map[string]any, key string) map[string]string {
	items, ok := m[key].(map[string]any)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(items))
	for k, v := range items {
		out[k] = FieldText(v)
	}
	return out
}

// AnySlice is values as an unstructured object holds a list of strings.
func AnySlice(values []string) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = v
	}
	return out
}

// StringList is the list of items, always known (empty for none).
func StringList(items []string) types.List {
	values := make([]attr.Value, len(items))
	for i, s := range items {
		values[i] = types.StringValue(s)
	}
	return types.ListValueMust(types.StringType, values)
}

// StringListOrNull is StringList, null for nil items (a field the object
// lacks, which the configuration left unset).
func StringListOrNull(items []string) types.List {
	if items == nil {
		return types.ListNull(types.StringType)
	}
	return StringList(items)
}

// StringSetOrNull is the set of items, null for none: spire-controller-manager
// omits an empty federatesWith, so an empty set and none are the same.
func StringSetOrNull(items []string) types.Set {
	if len(items) == 0 {
		return types.SetNull(types.StringType)
	}
	values := make([]attr.Value, len(items))
	for i, s := range items {
		values[i] = types.StringValue(s)
	}
	return types.SetValueMust(types.StringType, values)
}
