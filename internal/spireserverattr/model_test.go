package spireserverattr

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
)

// TestServerFromDefaults: what a spire_server value leaves unset (or the
// whole value, null or unknown) is the provider's SPIRE namespace and the
// usual pod and container, the same for every caller.
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
		"null":    {types.ObjectNull(attrTypes), "spire", spireexec.DefaultPod, spireexec.DefaultContainer},
		"unknown": {types.ObjectUnknown(attrTypes), "spire", spireexec.DefaultPod, spireexec.DefaultContainer},
		"partial": {partial, "spire", "spire-server-1", spireexec.DefaultContainer},
	} {
		t.Run(name, func(t *testing.T) {
			s, diags := ServerFrom(context.Background(), nil, "spire", tc.value)
			if diags.HasError() {
				t.Fatalf("diagnostics: %v", diags)
			}
			if s.Namespace != tc.namespace || s.Pod != tc.pod || s.Container != tc.container {
				t.Fatalf("got %s/%s (container %s), want %s/%s (container %s)", s.Namespace, s.Pod, s.Container, tc.namespace, tc.pod, tc.container)
			}
		})
	}
}
