package resources

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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

// objString and objInt64 read fields of unstructured objects, shared with
// the data sources.
var (
	objString  = providerdata.FieldString
	objInt64   = providerdata.FieldInt64
	objText    = providerdata.FieldText
	objStrings = providerdata.FieldStrings
	// objStringMap is nil when the field is absent.
	objStringMap = providerdata.FieldStringMap
	anySlice     = providerdata.AnySlice
)

// describeConditions renders status conditions for an error message, Ready
// and Degraded first: "Ready=False (InProgress): waiting for ...".
func describeConditions(obj *unstructured.Unstructured) string {
	if obj == nil {
		return "the object could not be read"
	}
	items, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	if len(items) == 0 {
		return "the operator has reported no conditions yet (is the cert-manager Operator running, with istio-csr support enabled?)"
	}
	rank := map[string]int{"Ready": 0, "Degraded": 1}
	lines := make([]string, 0, len(items))
	sort.SliceStable(items, func(i, j int) bool {
		a, _ := items[i].(map[string]any)
		b, _ := items[j].(map[string]any)
		ra, oka := rank[objText(a["type"])]
		rb, okb := rank[objText(b["type"])]
		if !oka {
			ra = 2
		}
		if !okb {
			rb = 2
		}
		return ra < rb
	})
	for _, item := range items {
		c, _ := item.(map[string]any)
		line := fmt.Sprintf("%s=%s", objText(c["type"]), objText(c["status"]))
		if reason := objText(c["reason"]); reason != "" {
			line += " (" + reason + ")"
		}
		if msg := objText(c["message"]); msg != "" {
			line += ": " + msg
		}
		lines = append(lines, "  - "+line)
	}
	return "\n" + strings.Join(lines, "\n")
}
