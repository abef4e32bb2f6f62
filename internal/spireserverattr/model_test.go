package spireserverattr

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
)

// TestServerFromDefaults: what a spire_server value leaves unset (or the
// whole value, null or unknown) is the cluster's SPIRE as the provider
// resolved it, here the chart's release `edge`, the same for every caller.
func TestServerFromDefaults(t *testing.T) {
	objectType, ok := ResourceAttribute("").GetType().(types.ObjectType)
	if !ok {
		t.Fatalf("the spire_server attribute is a %T, not an object", ResourceAttribute("").GetType())
	}
	attrTypes := objectType.AttrTypes
	partial := types.ObjectValueMust(attrTypes, map[string]attr.Value{
		"namespace": types.StringNull(), "pod": types.StringValue("spire-server-1"), "container": types.StringValue(""),
	})
	for name, tc := range map[string]struct {
		value                     types.Object
		namespace, pod, container string
	}{
		"null":    {types.ObjectNull(attrTypes), "spire-server", "edge-server-0", "spire-server"},
		"unknown": {types.ObjectUnknown(attrTypes), "spire-server", "edge-server-0", "spire-server"},
		"partial": {partial, "spire-server", "spire-server-1", "spire-server"},
	} {
		t.Run(name, func(t *testing.T) {
			data := &providerdata.Data{Spire: providerdata.ResolveSpire(providerdata.SpireSettings{
				Install: types.StringValue(providerdata.SpireInstallHelm), HelmRelease: types.StringValue("edge"),
			})}
			s, diags := ServerFrom(context.Background(), nil, data, tc.value)
			if diags.HasError() {
				t.Fatalf("diagnostics: %v", diags)
			}
			if s.Namespace != tc.namespace || s.Pod != tc.pod || s.Container != tc.container {
				t.Fatalf("got %s/%s (container %s), want %s/%s (container %s)", s.Namespace, s.Pod, s.Container, tc.namespace, tc.pod, tc.container)
			}
		})
	}
}
