package resources

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
)

// Helpers between Terraform values and the JSON-shaped maps of unstructured
// objects. A null value is left out of the object, and a field the object
// lacks reads as null, so the configuration and the object map one to one.

func objSetString(m map[string]any, key string, v types.String) {
	if !v.IsNull() && !v.IsUnknown() {
		m[key] = v.ValueString()
	}
}

func objSetInt64(m map[string]any, key string, v types.Int64) {
	if !v.IsNull() && !v.IsUnknown() {
		m[key] = v.ValueInt64()
	}
}

func objSetStrings(m map[string]any, key string, v []string) {
	if v == nil {
		return
	}
	out := make([]any, len(v))
	for i, s := range v {
		out[i] = s
	}
	m[key] = out
}

func objSetStringMap(m map[string]any, key string, v map[string]string) {
	if v == nil {
		return
	}
	out := make(map[string]any, len(v))
	for k, s := range v {
		out[k] = s
	}
	m[key] = out
}

func objMap(obj any, key string) (map[string]any, bool) {
	m, ok := obj.(map[string]any)
	if !ok {
		return nil, false
	}
	v, ok := m[key].(map[string]any)
	return v, ok
}

func objText(v any) string {
	switch s := v.(type) {
	case nil:
		return ""
	case string:
		return s
	default:
		return fmt.Sprint(s)
	}
}

// objString and objInt64 read fields of unstructured objects, shared with
// the data sources.
var (
	objString = providerdata.FieldString
	objInt64  = providerdata.FieldInt64
)

func objStrings(m map[string]any, key string) []string {
	items, ok := m[key].([]any)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(items))
	for _, item := range items {
		out = append(out, objText(item))
	}
	return out
}

func objStringMap(m map[string]any, key string) map[string]string {
	items, ok := m[key].(map[string]any)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(items))
	for k, v := range items {
		out[k] = objText(v)
	}
	return out
}
