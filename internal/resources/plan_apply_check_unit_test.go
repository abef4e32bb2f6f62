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

	"github.com/ztfabric/terraform-provider-zerotrust/internal/durationtype"
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

// elementSchema has RequiresReplace attributes inside the elements of a
// nested list and a nested map.
var elementSchema = schema.Schema{Attributes: map[string]schema.Attribute{
	"list": schema.ListNestedAttribute{Optional: true, NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
		"immutable": schema.StringAttribute{Optional: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}},
		"mutable":   schema.StringAttribute{Optional: true},
	}}},
	"map": schema.MapNestedAttribute{Optional: true, NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
		"immutable": schema.StringAttribute{Optional: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}},
	}}},
}}

// elementValue builds an elementSchema value: list elements as
// [immutable, mutable] pairs, map elements as key -> immutable.
func elementValue(list [][2]string, m map[string]string) tftypes.Value {
	typ, _ := elementSchema.Type().TerraformType(context.Background()).(tftypes.Object)
	listType, _ := typ.AttributeTypes["list"].(tftypes.List)
	mapType, _ := typ.AttributeTypes["map"].(tftypes.Map)
	listElem, _ := listType.ElementType.(tftypes.Object)
	mapElem, _ := mapType.ElementType.(tftypes.Object)
	items := make([]tftypes.Value, 0, len(list))
	for _, e := range list {
		items = append(items, tftypes.NewValue(listElem, map[string]tftypes.Value{
			"immutable": tftypes.NewValue(tftypes.String, e[0]), "mutable": tftypes.NewValue(tftypes.String, e[1]),
		}))
	}
	entries := map[string]tftypes.Value{}
	for k, v := range m {
		entries[k] = tftypes.NewValue(mapElem, map[string]tftypes.Value{"immutable": tftypes.NewValue(tftypes.String, v)})
	}
	return tftypes.NewValue(typ, map[string]tftypes.Value{
		"list": tftypes.NewValue(listType, items), "map": tftypes.NewValue(mapType, entries),
	})
}

func TestReplacedByAttributeInElements(t *testing.T) {
	ctx := context.Background()
	prior := elementValue([][2]string{{"a", "x"}}, map[string]string{"k": "a"})
	for _, tc := range []struct {
		name    string
		planned tftypes.Value
		want    bool
	}{
		{"no change", prior, false},
		{"mutable list element field", elementValue([][2]string{{"a", "y"}}, map[string]string{"k": "a"}), false},
		{"immutable list element field", elementValue([][2]string{{"b", "x"}}, map[string]string{"k": "a"}), true},
		{"list element added", elementValue([][2]string{{"a", "x"}, {"b", "x"}}, map[string]string{"k": "a"}), false},
		{"immutable map element field", elementValue([][2]string{{"a", "x"}}, map[string]string{"k": "b"}), true},
		{"map element replaced by another key", elementValue([][2]string{{"a", "x"}}, map[string]string{"j": "b"}), false},
	} {
		req := resource.ModifyPlanRequest{
			Config: tfsdk.Config{Schema: elementSchema, Raw: tc.planned},
			State:  tfsdk.State{Schema: elementSchema, Raw: prior},
		}
		if got := replacedByAttribute(ctx, req, tfsdk.Plan{Schema: elementSchema, Raw: tc.planned}); got != tc.want {
			t.Errorf("%s: replacedByAttribute = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// customSchema has custom-typed (durationtype) attributes, as istio_csr's
// durations are: the framework will not read them as types.String, which
// once made every IstioCSR update look like a replacement and skipped its
// dry run.
var customSchema = schema.Schema{Attributes: map[string]schema.Attribute{
	"immutable": schema.StringAttribute{Optional: true, CustomType: durationtype.Type{},
		PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}},
	"kept": schema.StringAttribute{Optional: true, CustomType: durationtype.Type{},
		PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
}}

func customValue(immutable, kept string) tftypes.Value {
	typ, _ := customSchema.Type().TerraformType(context.Background()).(tftypes.Object)
	return tftypes.NewValue(typ, map[string]tftypes.Value{
		"immutable": tftypes.NewValue(tftypes.String, immutable),
		"kept":      tftypes.NewValue(tftypes.String, kept),
	})
}

func TestReplacedByAttributeCustomType(t *testing.T) {
	ctx := context.Background()
	prior := customValue("1h", "2h")
	for _, tc := range []struct {
		name    string
		planned tftypes.Value
		want    bool
	}{
		{"custom-typed RequiresReplace attribute changes", customValue("3h", "2h"), true},
		{"custom-typed in-place attribute changes", customValue("1h", "4h"), false},
		{"no change", prior, false},
	} {
		req := resource.ModifyPlanRequest{
			Config: tfsdk.Config{Schema: customSchema, Raw: tc.planned},
			State:  tfsdk.State{Schema: customSchema, Raw: prior},
		}
		if got := replacedByAttribute(ctx, req, tfsdk.Plan{Schema: customSchema, Raw: tc.planned}); got != tc.want {
			t.Errorf("%s: replacedByAttribute = %v, want %v", tc.name, got, tc.want)
		}
	}
}
