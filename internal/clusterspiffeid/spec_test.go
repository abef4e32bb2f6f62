package clusterspiffeid

import (
	"context"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/durationtype"
)

// TestSetFromObjectRoundTrip: what ObjectFromSpec writes reads back as the
// same Spec, with nothing held before (an import, the data source); a field
// the object leaves out reads as null, except class_name, which reads "".
func TestSetFromObjectRoundTrip(t *testing.T) {
	ctx := context.Background()
	var read Spec
	if d := read.SetFromObject(ctx, &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"spiffeIDTemplate": "spiffe://{{ .TrustDomain }}/x",
		"podSelector": map[string]any{
			"matchLabels":      map[string]any{"app": "web"},
			"matchExpressions": []any{map[string]any{"key": "tier", "operator": "In", "values": []any{"a", "b"}}},
		},
		"federatesWith": []any{"west.example.org", "north.example.org"},
		"ttl":           "1h",
		"admin":         true,
	}}}); d.HasError() {
		t.Fatal(d)
	}
	if !read.NamespaceSelector.IsNull() || !read.JWTTTL.IsNull() || !read.Hint.IsNull() || !read.Fallback.IsNull() ||
		!read.DNSNameTemplates.IsNull() || read.ClassName.ValueString() != "" || read.ClassName.IsNull() {
		t.Errorf("fields the object leaves out read as %+v", read)
	}
	if !read.TTL.Equal(durationtype.NewValue("1h")) || !read.Admin.Equal(types.BoolValue(true)) {
		t.Errorf("ttl %v, admin %v; want 1h, true", read.TTL, read.Admin)
	}
	if got := read.TrustDomains(); len(got) != 2 || got[0] != "north.example.org" {
		t.Errorf("federates_with read as %v", got)
	}
	obj, d := ObjectFromSpec(ctx, "web", read)
	if d.HasError() {
		t.Fatal(d)
	}
	var again Spec
	if d := again.SetFromObject(ctx, obj); d.HasError() {
		t.Fatal(d)
	}
	want, got := reflect.ValueOf(read), reflect.ValueOf(again)
	for i := range want.NumField() {
		w, wok := want.Field(i).Interface().(attr.Value)
		g, gok := got.Field(i).Interface().(attr.Value)
		if !wok || !gok || !w.Equal(g) {
			t.Errorf("%s written as %v reads back as %v", want.Type().Field(i).Name, w, g)
		}
	}
}
