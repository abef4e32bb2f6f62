package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// configWithClusters is a provider configuration whose only attribute is
// clusters = clustersValue.
func configWithClusters(t *testing.T, clustersValue types.Map) tfsdk.Config {
	t.Helper()
	ctx := context.Background()
	s := providerSchema()
	state := tfsdk.State{Schema: s, Raw: tftypes.NewValue(s.Type().TerraformType(ctx), nil)}
	if diags := state.SetAttribute(ctx, path.Root("clusters"), clustersValue); diags.HasError() {
		t.Fatalf("building the configuration: %v", diags)
	}
	return tfsdk.Config{Schema: s, Raw: state.Raw}
}

// lateCluster is a clusters map with one cluster, "late", whose host is host.
func lateCluster(t *testing.T, host types.String) types.Map {
	t.Helper()
	ctx := context.Background()
	elem, ok := providerSchema().Attributes["clusters"].GetType().(types.MapType)
	if !ok {
		t.Fatal("clusters is not a map")
	}
	objType, ok := elem.ElemType.(types.ObjectType)
	if !ok {
		t.Fatal("clusters elements are not objects")
	}
	attrs := map[string]attr.Value{}
	for name, typ := range objType.AttrTypes {
		attrs[name] = nullOf(ctx, t, typ)
	}
	attrs["host"] = host
	obj, diags := types.ObjectValue(objType.AttrTypes, attrs)
	if diags.HasError() {
		t.Fatal(diags)
	}
	m, diags := types.MapValue(objType, map[string]attr.Value{"late": obj})
	if diags.HasError() {
		t.Fatal(diags)
	}
	return m
}

func nullOf(ctx context.Context, t *testing.T, typ attr.Type) attr.Value {
	t.Helper()
	v, err := typ.ValueFromTerraform(ctx, tftypes.NewValue(typ.TerraformType(ctx), nil))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestConfigureDefersUnknownConnections checks when Configure answers with
// the framework's provider-wide deferral: only for an unknown connection (or
// an unknown clusters map) and only when the client allows deferral.
func TestConfigureDefersUnknownConnections(t *testing.T) {
	unknownMap := types.MapUnknown(lateCluster(t, types.StringNull()).ElementType(context.Background()))
	cases := map[string]struct {
		clusters  types.Map
		deferral  bool
		wantDefer bool
		wantError string
	}{
		"unknown host, deferral allowed":   {lateCluster(t, types.StringUnknown()), true, true, ""},
		"unknown host, no deferral":        {lateCluster(t, types.StringUnknown()), false, false, ""},
		"known host, deferral allowed":     {lateCluster(t, types.StringValue("https://127.0.0.1:1")), true, false, ""},
		"unknown cluster map, deferral":    {unknownMap, true, true, ""},
		"unknown cluster map, no deferral": {unknownMap, false, false, "Cluster Map Not Known at Plan Time"},
		"no clusters, deferral allowed":    {types.MapNull(unknownMap.ElementType(context.Background())), true, false, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := provider.ConfigureRequest{
				Config:             configWithClusters(t, tc.clusters),
				ClientCapabilities: provider.ConfigureProviderClientCapabilities{DeferralAllowed: tc.deferral},
			}
			var resp provider.ConfigureResponse
			New("test")().Configure(context.Background(), req, &resp)

			if tc.wantError != "" {
				if !resp.Diagnostics.HasError() || resp.Diagnostics.Errors()[0].Summary() != tc.wantError {
					t.Fatalf("want error %q, got %v", tc.wantError, resp.Diagnostics)
				}
				return
			}
			if resp.Diagnostics.HasError() {
				t.Fatalf("unexpected diagnostics: %v", resp.Diagnostics)
			}
			if got := resp.Deferred != nil; got != tc.wantDefer {
				t.Fatalf("deferred = %v, want %v", got, tc.wantDefer)
			}
			if tc.wantDefer && resp.Deferred.Reason != provider.DeferredReasonProviderConfigUnknown {
				t.Errorf("deferred reason = %v, want %v", resp.Deferred.Reason, provider.DeferredReasonProviderConfigUnknown)
			}
		})
	}
}
