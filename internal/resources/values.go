package resources

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
)

// Converters between framework collections of strings and Go values, one
// set for every resource. Reading, a null or unknown collection and null or
// unknown elements are absent. Writing, two null rules exist on purpose:
// stringList is always known (a computed list the provider works out, empty
// when there is nothing), the ...OrNull forms are null for nil (a field the
// object lacks, which the configuration left unset), stringSetOrNull for an
// empty set too.

// stringMapOf reads a map of strings, of a custom string element type
// (such as quantitytype) too.
func stringMapOf(v types.Map) map[string]string {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	out := make(map[string]string, len(v.Elements()))
	for k, e := range v.Elements() {
		if s, ok := e.(stringText); ok && !s.IsNull() && !s.IsUnknown() {
			out[k] = s.ValueString()
		}
	}
	return out
}

// stringText is a string value: types.String, or a custom string type that
// embeds it.
type stringText interface {
	attr.Value
	ValueString() string
}

// stringMapOrNull is the map of items, null for nil items.
func stringMapOrNull(items map[string]string) types.Map {
	if items == nil {
		return types.MapNull(types.StringType)
	}
	values := make(map[string]attr.Value, len(items))
	for k, s := range items {
		values[k] = types.StringValue(s)
	}
	return types.MapValueMust(types.StringType, values)
}

// objectAs reads a nested object into its tfsdk struct; ok is false for a
// null or unknown object (nothing to send or read).
func objectAs[T any](ctx context.Context, v types.Object, diags *diag.Diagnostics) (T, bool) {
	var out T
	if v.IsNull() || v.IsUnknown() {
		return out, false
	}
	d := v.As(ctx, &out, basetypes.ObjectAsOptions{})
	diags.Append(d...)
	return out, !d.HasError()
}

// objectFrom builds a nested object of attrTypes from its tfsdk struct (or a
// map of attribute values).
func objectFrom(ctx context.Context, attrTypes map[string]attr.Type, from any, diags *diag.Diagnostics) types.Object {
	v, d := types.ObjectValueFrom(ctx, attrTypes, from)
	diags.Append(d...)
	return v
}

// stringOrDefault reads a string attribute, plain or of a custom string
// type (the durations).
func stringOrDefault(v attr.Value, def string) (string, bool) {
	var s types.String
	valuable, ok := v.(basetypes.StringValuable)
	if ok {
		var d diag.Diagnostics
		s, d = valuable.ToStringValue(context.Background())
		ok = !d.HasError()
	}
	switch {
	case !ok || s.IsNull():
		return def, true
	case s.IsUnknown():
		return "", false
	}
	return s.ValueString(), true
}

// int64OrDefault reads an int64 attribute: def when null, false when unknown.
func int64OrDefault(v attr.Value, def int64) (int64, bool) {
	i, ok := v.(types.Int64)
	switch {
	case !ok || i.IsNull():
		return def, true
	case i.IsUnknown():
		return 0, false
	}
	return i.ValueInt64(), true
}

// joinInt64s lists values for a diagnostic: "1, 2 or 3".
func joinInt64s(values []int64) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = fmt.Sprint(v)
	}
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// The string-collection conversions the data sources and the ClusterSPIFFEID
// mapping share live in providerdata; here they keep the names this
// package's files read them by.
var (
	stringsOf        = providerdata.Strings
	stringList       = providerdata.StringList
	stringListOrNull = providerdata.StringListOrNull
	stringSetOrNull  = providerdata.StringSetOrNull
)
