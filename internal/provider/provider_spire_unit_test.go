package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
)

// TestConfigureSpirePerCluster: a mixed fleet. The provider's spire sets
// the namespace of clusters without their own; cluster eks's own spire
// (install helm, release edge) replaces it whole, so eks gets the chart's
// namespace, not the provider's.
func TestConfigureSpirePerCluster(t *testing.T) {
	ctx := context.Background()
	clusters := lateCluster(t, types.StringValue("https://127.0.0.1:1"))
	objType, ok := clusters.ElementType(ctx).(types.ObjectType)
	if !ok {
		t.Fatal("clusters elements are not objects")
	}
	spireType, ok := objType.AttrTypes["spire"].(types.ObjectType)
	if !ok {
		t.Fatal("a cluster's spire is not an object")
	}
	spire := func(values map[string]string) types.Object {
		attrs := map[string]attr.Value{}
		for name := range spireType.AttrTypes {
			attrs[name] = types.StringNull()
			if v, ok := values[name]; ok {
				attrs[name] = types.StringValue(v)
			}
		}
		return types.ObjectValueMust(spireType.AttrTypes, attrs)
	}
	lateObj, ok := clusters.Elements()["late"].(types.Object)
	if !ok {
		t.Fatal("cluster late is not an object")
	}
	late := lateObj.Attributes()
	eks := map[string]attr.Value{}
	for k, v := range late {
		eks[k] = v
	}
	eks["spire"] = spire(map[string]string{"install": "helm", "helm_release": "edge"})
	clusters = types.MapValueMust(objType, map[string]attr.Value{
		"ocp": types.ObjectValueMust(objType.AttrTypes, late),
		"eks": types.ObjectValueMust(objType.AttrTypes, eks),
	})
	sch := providerSchema()
	state := tfsdk.State{Schema: sch, Raw: configWithClusters(t, clusters).Raw}
	if diags := state.SetAttribute(ctx, path.Root("spire"), spire(map[string]string{"namespace": "ztwim"})); diags.HasError() {
		t.Fatal(diags)
	}
	config := tfsdk.Config{Schema: sch, Raw: state.Raw}
	var resp provider.ConfigureResponse
	New("test")().Configure(ctx, provider.ConfigureRequest{Config: config}, &resp)
	if resp.Diagnostics.HasError() {
		t.Fatalf("unexpected diagnostics: %v", resp.Diagnostics)
	}
	data, ok := resp.ResourceData.(*providerdata.Data)
	if !ok {
		t.Fatalf("resource data is a %T", resp.ResourceData)
	}
	for key, want := range map[string]providerdata.Spire{
		"ocp": {Install: "operator", Namespace: "ztwim", Pod: "spire-server-0", Container: "spire-server",
			ClassName: "zero-trust-workload-identity-manager-spire", BundleNamespace: "ztwim", BundleConfigMap: "spire-bundle"},
		"eks": {Install: "helm", Namespace: "spire-server", Pod: "edge-server-0", Container: "spire-server",
			ClassName: "spire-server-edge", BundleNamespace: "spire-system", BundleConfigMap: "spire-bundle", HelmRelease: "edge"},
	} {
		if got := data.SpireOf(&kube.Client{Name: key}); got != want {
			t.Errorf("cluster %s: SPIRE %+v, want %+v", key, got, want)
		}
	}
}
