package resources

import (
	"context"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestMeshServiceIdentitiesImportID(t *testing.T) {
	for id, want := range map[string]objectIdentity{
		"shop/cart":         {Namespace: "shop", Name: "cart"},
		"west/shop/cart":    {Cluster: "west", Namespace: "shop", Name: "cart"},
		"a/b/shop/cart.v1":  {Cluster: "a/b", Namespace: "shop", Name: "cart.v1"},
		"east-1/kuma/redis": {Cluster: "east-1", Namespace: "kuma", Name: "redis"},
	} {
		got, err := meshServiceIdentitiesType.importID.parse(id)
		if err != nil || got != want {
			t.Errorf("parse(%q) = %+v, %v; want %+v", id, got, err, want)
		}
		if back := resourceID(clusterValue(got.Cluster), got.Namespace+"/"+got.Name); back != id {
			t.Errorf("id of %+v = %q, want %q", got, back, id)
		}
	}
	for _, id := range []string{"", "cart", "shop/", "/cart", "west//cart", "/shop/cart"} {
		if got, err := meshServiceIdentitiesType.importID.parse(id); err == nil {
			t.Errorf("parse(%q) = %+v, want an error", id, got)
		}
	}
}

// The apply patch holds the identities and nothing else of the spec; a
// read keeps only SpiffeID identities, and none reads as null.
func TestMeshServiceIdentitiesObjectRoundTrip(t *testing.T) {
	ctx := context.Background()
	ids := []string{"spiffe://east.test/ns/shop/sa/cart", "spiffe://east.test/ns/shop/sa/canary"}
	list, _ := types.ListValueFrom(ctx, types.StringType, ids)
	m := meshServiceIdentitiesResourceModel{
		Cluster: types.StringValue("east"), Namespace: types.StringValue("shop"), Name: types.StringValue("cart"), Identities: list,
	}
	obj, diags := meshServiceIdentitiesObjectFromModel(ctx, m)
	if diags.HasError() {
		t.Fatal(diags)
	}
	want := map[string]any{"identities": []any{
		map[string]any{"type": "SpiffeID", "value": ids[0]},
		map[string]any{"type": "SpiffeID", "value": ids[1]},
	}}
	if !reflect.DeepEqual(obj.Object["spec"], want) || obj.GetName() != "cart" || obj.GetNamespace() != "shop" {
		t.Fatalf("object = %v", obj.Object)
	}

	live := obj.DeepCopy()
	items, _, _ := unstructured.NestedSlice(live.Object, "spec", "identities")
	items = append(items, map[string]any{"type": "ServiceTag", "value": "cart_shop_svc_80"})
	if err := unstructured.SetNestedSlice(live.Object, items, "spec", "identities"); err != nil {
		t.Fatal(err)
	}
	state, diags := meshServiceIdentitiesStateFromObject(ctx, types.StringValue("east"), live)
	if diags.HasError() {
		t.Fatal(diags)
	}
	if !state.Identities.Equal(list) || state.ID.ValueString() != "east/shop/cart" || state.ForceConflicts.ValueBool() {
		t.Errorf("state = %+v", state)
	}

	unstructured.RemoveNestedField(live.Object, "spec", "identities")
	state, _ = meshServiceIdentitiesStateFromObject(ctx, types.StringNull(), live)
	if !state.Identities.IsNull() || state.ID.ValueString() != "shop/cart" {
		t.Errorf("state without identities = %+v, want null identities and id shop/cart", state)
	}
}
