package resources

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

func TestResourceIDRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		cluster types.String
		name    string
		id      string
	}{
		{types.StringNull(), "west.example.org", "west.example.org"},
		{types.StringValue("east"), "west.example.org", "east/west.example.org"},
		{types.StringValue("team/east"), "west.example.org", "team/east/west.example.org"},
	} {
		if got := resourceID(tc.cluster, tc.name); got != tc.id {
			t.Errorf("resourceID(%v, %q) = %q, want %q", tc.cluster, tc.name, got, tc.id)
		}
		got, err := federatedTrustDomainType.importID.parse(tc.id)
		if err != nil || !clusterValue(got.Cluster).Equal(tc.cluster) || got.Name != tc.name {
			t.Errorf("parse(%q) = %+v, %v", tc.id, got, err)
		}
	}
}

func TestDefaultObjectName(t *testing.T) {
	if got := defaultObjectName("my_td.example.org"); got != "my-td.example.org" {
		t.Errorf("defaultObjectName = %q", got)
	}
}

func TestBootstrapOnlyKeepsPriorValue(t *testing.T) {
	obj := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"v": tftypes.String}}
	present := tfsdk.State{Raw: tftypes.NewValue(obj, map[string]tftypes.Value{"v": tftypes.NewValue(tftypes.String, "old")})}
	absent := tfsdk.State{Raw: tftypes.NewValue(obj, nil)}
	plan := tfsdk.Plan{Raw: tftypes.NewValue(obj, map[string]tftypes.Value{"v": tftypes.NewValue(tftypes.String, "new")})}

	for _, tc := range []struct {
		name   string
		state  tfsdk.State
		prior  types.String
		config types.String
		want   types.String
	}{
		{"create uses config", absent, types.StringNull(), types.StringValue("new"), types.StringValue("new")},
		{"update keeps prior", present, types.StringValue("old"), types.StringValue("new"), types.StringValue("old")},
		{"unknown config keeps prior", present, types.StringValue("old"), types.StringUnknown(), types.StringValue("old")},
		{"create without config plans null", absent, types.StringNull(), types.StringNull(), types.StringNull()},
		{"removed from config keeps prior", present, types.StringValue("old"), types.StringNull(), types.StringValue("old")},
		{"adopted without value plans config", present, types.StringNull(), types.StringValue("new"), types.StringValue("new")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The framework proposes unknown for an unconfigured computed value.
			proposed := tc.config
			if proposed.IsNull() {
				proposed = types.StringUnknown()
			}
			req := planmodifier.StringRequest{State: tc.state, Plan: plan, StateValue: tc.prior, ConfigValue: tc.config, PlanValue: proposed}
			resp := &planmodifier.StringResponse{PlanValue: proposed}
			bootstrapOnly{}.PlanModifyString(context.Background(), req, resp)
			if !resp.PlanValue.Equal(tc.want) {
				t.Errorf("plan = %v, want %v", resp.PlanValue, tc.want)
			}
		})
	}
}
