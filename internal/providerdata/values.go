package providerdata

import "github.com/hashicorp/terraform-plugin-framework/types"

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
