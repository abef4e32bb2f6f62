package resources

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestClusterSPIFFEIDListFilter: federates_with lets through the objects
// whose spec.federatesWith holds it, unset every object; what is listed is
// the state ImportState stores.
func TestClusterSPIFFEIDListFilter(t *testing.T) {
	ctx := context.Background()
	shell, ok := NewClusterSPIFFEIDListResource().(*listShell[clusterSPIFFEIDListConfig])
	if !ok {
		t.Fatal("the list resource is not the list shell")
	}
	for name, tc := range map[string]struct {
		filter        types.String
		federatesWith []any
		skip          bool
	}{
		"no filter, no federation":      {types.StringNull(), nil, false},
		"no filter, federation":         {types.StringNull(), []any{"b.test"}, false},
		"filter in federatesWith":       {types.StringValue("b.test"), []any{"a.test", "b.test"}, false},
		"filter not there":              {types.StringValue("c.test"), []any{"a.test", "b.test"}, true},
		"filter, object federates none": {types.StringValue("c.test"), nil, true},
	} {
		t.Run(name, func(t *testing.T) {
			spec := map[string]any{"spiffeIDTemplate": "spiffe://{{ .TrustDomain }}/w"}
			if tc.federatesWith != nil {
				spec["federatesWith"] = tc.federatesWith
			}
			obj := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
			obj.SetName("web")
			lo, skip, diags := shell.convert(clusterSPIFFEIDListConfig{FederatesWith: tc.filter})(ctx, listTarget{key: "west"}, obj, true)
			if diags.HasError() {
				t.Fatalf("convert: %v", diags)
			}
			if skip != tc.skip {
				t.Fatalf("skip = %v, want %v", skip, tc.skip)
			}
			if skip {
				return
			}
			want, _ := clusterSPIFFEIDStateFromObject(ctx, types.StringValue("west"), obj, nil)
			got, ok := lo.state.(*clusterSPIFFEIDResourceModel)
			if !ok || lo.id != (objectIdentity{Cluster: "west", Name: "web"}) || !got.ID.Equal(want.ID) ||
				!got.FederatesWith.Equal(want.FederatesWith) {
				t.Errorf("listed %+v, state %+v; want the identity west/web and state %+v", lo.id, lo.state, want)
			}
		})
	}
}
