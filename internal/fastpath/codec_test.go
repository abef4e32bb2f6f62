package fastpath

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

type model struct {
	Name    types.String `tfsdk:"name"`
	Enabled types.Bool   `tfsdk:"enabled"`
	Profile types.Object `tfsdk:"profile"`
	Ignored string
}

var profileTypes = map[string]attr.Type{"type": types.StringType}

var modelType = basetypes.ObjectType{AttrTypes: map[string]attr.Type{
	"name":    types.StringType,
	"enabled": types.BoolType,
	"profile": types.ObjectType{AttrTypes: profileTypes},
}}

func TestCodecRoundTrip(t *testing.T) {
	ctx := context.Background()
	c := NewCodec[model](ctx, modelType)
	in := model{
		Name:    types.StringValue("a"),
		Enabled: types.BoolUnknown(),
		Profile: types.ObjectValueMust(profileTypes, map[string]attr.Value{"type": types.StringValue("https_web")}),
	}
	raw, diags := c.Value(ctx, &in)
	if diags.HasError() {
		t.Fatal(diags)
	}
	want := tftypes.NewValue(modelType.TerraformType(ctx), map[string]tftypes.Value{
		"name":    tftypes.NewValue(tftypes.String, "a"),
		"enabled": tftypes.NewValue(tftypes.Bool, tftypes.UnknownValue),
		"profile": tftypes.NewValue(tftypes.Object{AttributeTypes: map[string]tftypes.Type{"type": tftypes.String}},
			map[string]tftypes.Value{"type": tftypes.NewValue(tftypes.String, "https_web")}),
	})
	if !raw.Equal(want) {
		t.Fatalf("Value = %s, want %s", raw, want)
	}
	var out model
	if diags := c.Get(ctx, raw, &out); diags.HasError() {
		t.Fatal(diags)
	}
	if !out.Name.Equal(in.Name) || !out.Enabled.IsUnknown() || !out.Profile.Equal(in.Profile) {
		t.Fatalf("Get = %+v, want %+v", out, in)
	}
}

func TestCodecGetRefusesNull(t *testing.T) {
	ctx := context.Background()
	var out model
	if diags := NewCodec[model](ctx, modelType).Get(ctx, tftypes.NewValue(modelType.TerraformType(ctx), nil), &out); !diags.HasError() {
		t.Fatal("want an error for a null object")
	}
}

func TestCodecValueRefusesWrongNestedType(t *testing.T) {
	ctx := context.Background()
	in := model{Name: types.StringNull(), Enabled: types.BoolNull(),
		Profile: types.ObjectNull(map[string]attr.Type{"other": types.StringType})}
	if _, diags := NewCodec[model](ctx, modelType).Value(ctx, &in); !diags.HasError() {
		t.Fatal("want an error for a nested object of another type")
	}
}

func TestNewCodecPanicsOnMismatch(t *testing.T) {
	ctx := context.Background()
	type missing struct {
		Name types.String `tfsdk:"name"`
	}
	for name, f := range map[string]func(){
		"attribute without field": func() { NewCodec[missing](ctx, modelType) },
		"not an object":           func() { NewCodec[model](ctx, types.StringType) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("want a panic")
				}
			}()
			f()
		})
	}
}

// embedding is model with part of its attributes in an embedded struct, as
// a resource model that embeds a mapping shared with a data source.
type embedding struct {
	Name types.String `tfsdk:"name"`
	embedded
	Profile types.Object `tfsdk:"profile"`
}

type embedded struct {
	Enabled types.Bool `tfsdk:"enabled"`
}

func TestCodecReadsEmbeddedStructs(t *testing.T) {
	ctx := context.Background()
	c := NewCodec[embedding](ctx, modelType)
	in := embedding{Name: types.StringValue("a"), embedded: embedded{Enabled: types.BoolValue(true)},
		Profile: types.ObjectNull(profileTypes)}
	raw, diags := c.Value(ctx, &in)
	if diags.HasError() {
		t.Fatal(diags)
	}
	var out embedding
	if diags := c.Get(ctx, raw, &out); diags.HasError() {
		t.Fatal(diags)
	}
	if !out.Enabled.Equal(types.BoolValue(true)) || !out.Name.Equal(in.Name) || !out.Profile.IsNull() {
		t.Fatalf("Get = %+v, want %+v", out, in)
	}
}

func TestNewCodecPanicsOnTwoFieldsOfOneAttribute(t *testing.T) {
	type twice struct {
		Enabled types.Bool `tfsdk:"enabled"`
		embedding
	}
	defer func() {
		if recover() == nil {
			t.Fatal("want a panic")
		}
	}()
	NewCodec[twice](context.Background(), modelType)
}
