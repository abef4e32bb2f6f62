package semanticstring

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// caseless is a Kind for the tests: texts that differ in case only mean the
// same.
type caseless struct{}

func (caseless) Package() string { return "caseless" }

func (caseless) Same(a, b string) bool {
	return len(a) == len(b) && (a == b || (a == "A" && b == "a") || (a == "a" && b == "A"))
}

func value(s string) Value[caseless] {
	return Value[caseless]{StringValue: basetypes.NewStringValue(s)}
}

func TestStringSemanticEquals(t *testing.T) {
	ctx := context.Background()
	eq, diags := value("a").StringSemanticEquals(ctx, value("A"))
	if diags.HasError() || !eq {
		t.Errorf("a vs prior A: equal = %v, diags %v; want equal", eq, diags)
	}
	eq, diags = value("b").StringSemanticEquals(ctx, value("A"))
	if diags.HasError() || eq {
		t.Errorf("b vs prior A: equal = %v, diags %v; want different", eq, diags)
	}
	if _, diags := value("a").StringSemanticEquals(ctx, basetypes.NewStringValue("a")); !diags.HasError() {
		t.Error("a plain string as prior value: want an error diagnostic")
	}
}

func TestTypeRoundTrip(t *testing.T) {
	ctx := context.Background()
	typ := Type[caseless]{}
	if typ.String() != "caseless.Type" {
		t.Errorf("String() = %q", typ.String())
	}
	v, err := typ.ValueFromTerraform(ctx, tftypes.NewValue(tftypes.String, "a"))
	if err != nil {
		t.Fatal(err)
	}
	a, ok := v.(Value[caseless])
	if !ok || a.ValueString() != "a" {
		t.Fatalf("ValueFromTerraform = %#v, want Value a", v)
	}
	if !a.Type(ctx).Equal(typ) || typ.Equal(basetypes.StringType{}) {
		t.Error("Type equality: want Type equal to itself only")
	}
	if a.Equal(value("A")) || !a.Equal(value("a")) {
		t.Error("Equal compares the text")
	}
	s, diags := typ.ValueFromString(ctx, basetypes.NewStringValue("A"))
	if _, ok := s.(Value[caseless]); !ok || diags.HasError() {
		t.Errorf("ValueFromString = %#v, %v", s, diags)
	}
	null, err := typ.ValueFromTerraform(ctx, tftypes.NewValue(tftypes.String, nil))
	if err != nil || !null.IsNull() {
		t.Errorf("null: %v, %v", null, err)
	}
	if _, ok := typ.ValueType(ctx).(Value[caseless]); !ok {
		t.Error("ValueType: want a Value")
	}
}
