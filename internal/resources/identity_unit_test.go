package resources

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// An import identity that names another object than the one a kind allows
// is refused before anything is read, with the type's own words; the one
// name passes.
func TestImportTargetRefusesAnotherFixedName(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		t    *typeInfo
		vals map[string]tftypes.Value
		want string
	}{
		{istioCSRType.typeInfo, map[string]tftypes.Value{"namespace": tftypes.NewValue(tftypes.String, "istio-system")}, "An IstioCSR is always named"},
		{spireFederationType, map[string]tftypes.Value{}, "The SpireServer is a singleton"},
	} {
		for _, name := range []string{"other", tc.t.importID.fixedName} {
			schema := tc.t.shape.schema()
			vals := map[string]tftypes.Value{"cluster": tftypes.NewValue(tftypes.String, nil), "name": tftypes.NewValue(tftypes.String, name)}
			for k, v := range tc.vals {
				vals[k] = v
			}
			req := resource.ImportStateRequest{Identity: &tfsdk.ResourceIdentity{Schema: schema,
				Raw: tftypes.NewValue(schema.Type().TerraformType(ctx), vals)}}
			var diags diag.Diagnostics
			_, ok := tc.t.importTarget(ctx, nil, req, &diags)
			refused := name != tc.t.importID.fixedName
			if ok == refused || (refused && (len(diags) != 1 || !strings.Contains(diags[0].Detail(), tc.want) ||
				!strings.Contains(diags[0].Detail(), `"other"`))) {
				t.Errorf("%s, name %q: ok = %v, diagnostics %v; want refused = %v with %q", tc.t.name, name, ok, diags, refused, tc.want)
			}
		}
	}
}
