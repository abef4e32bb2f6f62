package resources

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The plan-time dry run must stay out of replacements, which the framework
// does not show ModifyPlan, and out of plans whose object is not known yet.
// These tests pin both gates with the framework's own types.

var gateSchema = schema.Schema{Attributes: map[string]schema.Attribute{
	"id":      schema.StringAttribute{Computed: true, PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
	"mutable": schema.StringAttribute{Optional: true},
	"nested": schema.SingleNestedAttribute{Optional: true, Attributes: map[string]schema.Attribute{
		"immutable": schema.StringAttribute{Optional: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}},
	}},
	"output": schema.StringAttribute{Computed: true},
}}

func gateValue(mutable, immutable, output any) tftypes.Value {
	ctx := context.Background()
	typ, _ := gateSchema.Type().TerraformType(ctx).(tftypes.Object)
	nested, _ := typ.AttributeTypes["nested"].(tftypes.Object)
	return tftypes.NewValue(typ, map[string]tftypes.Value{
		"id":      tftypes.NewValue(tftypes.String, "x"),
		"mutable": tftypes.NewValue(tftypes.String, mutable),
		"nested": tftypes.NewValue(nested, map[string]tftypes.Value{
			"immutable": tftypes.NewValue(tftypes.String, immutable),
		}),
		"output": tftypes.NewValue(tftypes.String, output),
	})
}

func TestReplacedByAttribute(t *testing.T) {
	ctx := context.Background()
	prior := gateValue("a", "keep", "out")
	for _, tc := range []struct {
		name    string
		planned tftypes.Value
		want    bool
	}{
		{"in-place change", gateValue("b", "keep", "out"), false},
		{"nested RequiresReplace attribute changes", gateValue("a", "other", "out"), true},
		{"no change", prior, false},
	} {
		req := resource.ModifyPlanRequest{
			Config: tfsdk.Config{Schema: gateSchema, Raw: tc.planned},
			State:  tfsdk.State{Schema: gateSchema, Raw: prior},
		}
		if got := replacedByAttribute(ctx, req, tfsdk.Plan{Schema: gateSchema, Raw: tc.planned}); got != tc.want {
			t.Errorf("%s: replacedByAttribute = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestUnknownInputs(t *testing.T) {
	if unknownInputs(gateValue("a", "b", tftypes.UnknownValue), []string{"output"}) {
		t.Error("an unknown output made the object unknown")
	}
	if !unknownInputs(gateValue("a", tftypes.UnknownValue, "out"), []string{"output"}) {
		t.Error("an unknown nested input was not seen")
	}
	if !unknownInputs(gateValue(tftypes.UnknownValue, "b", "out"), nil) {
		t.Error("an unknown top-level input was not seen")
	}
}
