package providerdata

import (
	"fmt"
	"time"

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
